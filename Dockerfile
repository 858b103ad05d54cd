# Airflow with this provider: the Airflow and Python versions constraints.txt pins, a Java
# runtime for spark-submit, the provider installed exactly as `make test` installs it
# (scripts/install.sh, with the same constraints; the hive extra for the example DAGs'
# metastore policy), and the example DAGs.
#
#   docker build -t airflow-fscommit .
#
# Runs as the image's `airflow` user (uid 50000); only the Java installation needs root.
FROM apache/airflow:3.3.2-python3.11

USER 0
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends default-jre-headless \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*
ENV JAVA_HOME=/usr/lib/jvm/default-java \
    PIP_NO_CACHE_DIR=1

# The official image's airflow user (uid 50000, group 0).
USER 50000
WORKDIR /opt/fscommit
COPY --chown=50000:0 setup.cfg pyproject.toml README.md constraints.txt ./
COPY --chown=50000:0 scripts/install.sh scripts/check_pyspark.py scripts/
COPY --chown=50000:0 airflow_provider_fscommit/ airflow_provider_fscommit/
RUN scripts/install.sh python '.[hive,openlineage,s3,spark]'

COPY --chown=50000:0 dags/ /opt/airflow/dags/
WORKDIR /opt/airflow
