// A Hive metastore Thrift server on 127.0.0.1 only, from the Hive 2.3 jars pyspark ships.
// HiveMetaStore's own main binds every interface; this serves the same handler on loopback.
// Configuration comes from system properties (-Djavax.jdo.option.ConnectionURL=...).
import java.net.InetSocketAddress;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;

public class LoopbackMetastore {
  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    HiveConf conf = new HiveConf(HiveMetaStore.class);
    // Hive's lock calls (Iceberg's Hive catalog commits under one) need the transaction
    // tables; in an embedded Derby nothing else creates them. A restart finds them made.
    TxnDbUtil.setConfValues(conf);
    try {
      TxnDbUtil.prepDb(conf);
    } catch (Exception existing) {
      System.out.println("transaction tables kept: " + existing.getMessage());
    }
    ThriftHiveMetastore.Iface handler =
        HiveMetaStore.newRetryingHMSHandler("fscommit loopback metastore", conf, false);
    TServerSocket socket = new TServerSocket(new InetSocketAddress("127.0.0.1", port));
    TThreadPoolServer server = new TThreadPoolServer(
        new TThreadPoolServer.Args(socket)
            .processor(new ThriftHiveMetastore.Processor<>(handler))
            .protocolFactory(new TBinaryProtocol.Factory())
            .minWorkerThreads(2)
            .maxWorkerThreads(64));
    System.out.println("fscommit metastore listening on 127.0.0.1:" + port);
    System.out.flush();
    server.serve();
  }
}
