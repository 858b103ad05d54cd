"""JavaDateTimeFormatter against the real thing: java.time, called the way Flink calls it.

The differential test compiles a tiny Java program once per session that applies Flink's
``DefaultPartTimeExtractor.toLocalDateTime`` rule (``DateTimeFormatter.ofPattern(pattern,
Locale.ROOT)``, ``LocalDateTime.parse`` and else ``LocalDate.parse`` at midnight) to every
(pattern, text) case in one run, and checks that the Python port gives the same answer.
Hand-written expectations come first so that the intent stays readable (and tested) on a
machine without a JDK.
"""

from __future__ import annotations

import datetime
import shutil
import subprocess

import pytest

from airflow_provider_fscommit.core.partition.datetime_formatter import JavaDateTimeFormatter


def _dt(*args: int) -> datetime.datetime:
    return datetime.datetime(*args)


# --------------------------------------------------------------------------- expectations


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("yyyyMMdd", "20261120", _dt(2026, 11, 20)),
        ("yyyy-MM-dd HH:mm:ss", "2026-11-20 10:15:30", _dt(2026, 11, 20, 10, 15, 30)),
        ("yyyy/MM/dd'T'HH", "2026/11/20T10", _dt(2026, 11, 20, 10)),
        ("yyyyMMddHHmmssSSS", "20261120101530123", _dt(2026, 11, 20, 10, 15, 30, 123000)),
        ("yyMMdd", "261120", _dt(2026, 11, 20)),
        ("yyyy-MM-dd[ HH:mm:ss]", "2026-11-20", _dt(2026, 11, 20)),
        ("yyyy-MM-dd[ HH:mm:ss]", "2026-11-20 10:15:30", _dt(2026, 11, 20, 10, 15, 30)),
        ("'dt='yyyy-MM-dd'/hour='HH", "dt=2026-11-20/hour=07", _dt(2026, 11, 20, 7)),
        # SMART resolver: day 29..31 is clamped to the month's end, 24:00 is the next day.
        ("yyyy-MM-dd", "2026-02-30", _dt(2026, 2, 28)),
        ("yyyy-MM-dd HH:mm", "2026-12-31 24:00", _dt(2027, 1, 1)),
        # Nanoseconds are truncated to Python's microseconds.
        (
            "yyyy-MM-dd HH:mm:ss.SSSSSSSSS",
            "2026-11-20 10:15:07.123456789",
            _dt(2026, 11, 20, 10, 15, 7, 123456),
        ),
        # A time without an hour is dropped (Java resolves the date alone): midnight.
        ("ss.SSS yyyy-MM-dd", "07.123 2026-11-20", _dt(2026, 11, 20)),
    ],
)
def test_parse(pattern: str, text: str, expected: datetime.datetime) -> None:
    assert JavaDateTimeFormatter(pattern).parse(text) == expected


def test_result_is_naive() -> None:
    assert JavaDateTimeFormatter("yyyy-MM-dd HH").parse("2026-11-20 10").tzinfo is None


def test_pattern_property_and_repr() -> None:
    formatter = JavaDateTimeFormatter("yyyy-MM-dd")
    assert formatter.pattern == "yyyy-MM-dd"
    assert repr(formatter) == "JavaDateTimeFormatter('yyyy-MM-dd')"


@pytest.mark.parametrize(
    ("pattern", "text", "reason"),
    [
        ("yyyy-MM-dd", "2026-13-01", "month-of-year"),
        ("yyyy-MM-dd", "2026-04-32", "day-of-month"),
        ("yyyy-MM-dd HH:mm", "2026-11-20 24:01", "hour-of-day"),
        ("yyyy-MM-dd", "2026-11-20 ", "does not match"),
        ("yyyy-MM", "2026-11", "complete date"),
        ("uuuu-MM-dd", "0000-01-01", "outside the range of Python's datetime"),
    ],
)
def test_parse_error_names_text_and_pattern(pattern: str, text: str, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        JavaDateTimeFormatter(pattern).parse(text)
    message = str(info.value)
    assert message.startswith(f"cannot parse {text!r} with timestamp formatter {pattern!r}: ")
    assert reason in message


@pytest.mark.parametrize(
    "letter",
    # Every other letter java.time knows (and two it does not): one message naming it.
    [*"EDZXxGYwWecFQqLANVzOg", "T", "p"],
)
def test_unsupported_letter_is_rejected_by_name(letter: str) -> None:
    pattern = f"yyyy-MM-dd {letter}"
    with pytest.raises(ValueError) as info:
        JavaDateTimeFormatter(pattern)
    message = str(info.value)
    assert f"unsupported letter {letter!r}" in message
    assert f"timestamp formatter {pattern!r}" in message
    assert "supported: y u M d H h k K a m s S n" in message


def test_unquoted_letter_suggests_quoting() -> None:
    with pytest.raises(ValueError, match=r"unsupported letter 'T'.*quote literal letters"):
        JavaDateTimeFormatter("yyyy-MM-ddTHH")


@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [
        ("yyyy-MM-ddd", "too many pattern letters 'ddd' for letter 'd'"),
        ("yyyy-MM-dd HHH", "too many pattern letters 'HHH'"),
        ("yyyy-MM-dd aa", "too many pattern letters 'aa'"),
        ("yyyy-MMMMMM-dd", "too many pattern letters 'MMMMMM'"),
        ("ss.SSSSSSSSSS", "too many pattern letters 'SSSSSSSSSS'"),
        ("y" * 20, "too many pattern letters"),
        ("yyyy-MMMMM-dd", "narrow month names"),
        ("yyyy-MM-dd'T", "unterminated quoted literal"),
        ("yyyy-MM-dd]", "']' at index 10 without a preceding '['"),
        ("yyyy{MM}", "reserved character '{'"),
        ("yyyy#MM", "reserved character '#'"),
    ],
)
def test_malformed_pattern(pattern: str, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        JavaDateTimeFormatter(pattern)
    assert fragment in str(info.value)
    assert repr(pattern) in str(info.value)


def test_non_ascii_letters_and_digits_are_literals_not_fields() -> None:
    formatter = JavaDateTimeFormatter("yyyy年MM月dd日")
    assert formatter.parse("2026年11月20日") == _dt(2026, 11, 20)
    with pytest.raises(ValueError):  # only ASCII digits count, as in java.time
        formatter.parse("\uff12\uff10\uff12\uff16年11月20日")


# ------------------------------------------------------------------- differential with Java

# (pattern, text): each is run through java.time and through JavaDateTimeFormatter.
CASES: list[tuple[str, str]] = [
    # yyyy is exactly four digits unless a '+' announces more; adjacency reserves digits.
    ("yyyyMMdd", "20261120"),
    ("yyyyMMdd", "2026112"),
    ("yyyyMMdd", "202611201"),
    ("yyyyMMdd", "2026-11-20"),
    ("yyyyMMdd", "+020261120"),
    ("yyyyMMddHH", "2026112010"),
    ("yyyyMMddHH", "20261120"),
    ("yyyyMMddHHmm", "202611201015"),
    ("yyyyMMddHHmmss", "20261120101530"),
    ("yyyyMMddHHmmssSSS", "20261120101530123"),
    ("yyyyMMd", "2026111"),
    ("yyyyMMdd[HH]", "2026112010"),
    ("yyyyMMdd[HH]", "20261120"),
    ("yyyy[]MMdd", "20261120"),
    ("uuuuMMdd", "20261120"),
    ("uuuuMMdd", "020261120"),
    ("yMMdd", "20261120"),
    ("yMMdd", "2026011"),
    ("yMMdd", "-20261120"),
    ("yyMMdd", "261120"),
    ("yyMMdd", "991231"),
    ("yyMMdd", "20261120"),
    # Separated dates, widths and signs.
    ("yyyy-MM-dd", "2026-11-20"),
    ("yyyy-MM-dd", "2026-1-20"),
    ("yyyy-MM-dd", "2026-11-2"),
    ("yyyy-MM-dd", "26-11-20"),
    ("yyyy-MM-dd", "02026-11-20"),
    ("yyyy-MM-dd", "+02026-11-20"),
    ("yyyy-MM-dd", "+2026-11-20"),
    ("yyyy-MM-dd", "-2026-11-20"),
    ("yyyy-MM-dd", "0000-01-01"),
    ("yyyy-MM-dd", "+12026-11-20"),
    ("yyyyy-MM-dd", "02026-11-20"),
    ("uuuu-MM-dd", "2026-11-20"),
    ("uuuu-MM-dd", "0000-01-01"),
    ("uuuu-MM-dd", "-2026-01-01"),
    ("uuuu-MM-dd", "-0-01-01"),
    ("uuuu-MM-dd", "+2026-01-01"),
    ("yy-MM-dd", "26-11-20"),
    ("yyy-MM-dd", "026-11-20"),
    ("y-MM-dd", "26-11-20"),
    ("y-M-d", "2026-1-1"),
    ("y-M-d", "2026-001-0001"),
    ("y-M-d", "2026--1-1"),
    ("y-M-d", "2026-+1-1"),
    ("d.M.yyyy", "5.1.2026"),
    ("dd/MM/yyyy", "20/11/2026"),
    # Invalid and clamped dates (ResolverStyle.SMART).
    ("yyyy-MM-dd", "2026-02-30"),
    ("yyyy-MM-dd", "2024-02-30"),
    ("yyyy-MM-dd", "2026-02-29"),
    ("yyyy-MM-dd", "2026-04-31"),
    ("yyyy-MM-dd", "2026-04-32"),
    ("yyyy-MM-dd", "2026-13-01"),
    ("yyyy-MM-dd", "2026-00-10"),
    ("yyyy-MM-dd", "2026-01-00"),
    ("yyyy-MM-dd", "9999-12-31"),
    # Spaces and garbage.
    ("yyyy-MM-dd", " 2026-11-20"),
    ("yyyy-MM-dd", "2026-11-20 "),
    ("yyyy-MM-dd", "2026-11-20x"),
    ("yyyy-MM-dd", ""),
    ("yyyy-MM-dd", "\uff12\uff10\uff12\uff16-11-20"),  # full-width digits
    ("yyyy-MM-dd HH:mm:ss", "2026-11-20  10:15:30"),
    # Times.
    ("yyyy-MM-dd HH:mm:ss", "2026-11-20 10:15:30"),
    ("yyyy-MM-dd HH:mm:ss", "2026-11-20 24:00:00"),
    ("yyyy-MM-dd HH:mm:ss", "2026-12-31 24:00:00"),
    ("yyyy-MM-dd HH:mm:ss", "2026-11-20 24:00:01"),
    ("yyyy-MM-dd HH:mm:ss", "2026-11-20 23:60:00"),
    ("yyyy-MM-dd HH:mm:ss", "2026-11-20 23:59:60"),
    ("yyyy-MM-dd HH:mm:ss", "2026-11-20 10:15"),
    ("yyyy-MM-dd HH:mm:ss", "2026-11-20"),
    ("yyyy-MM-dd HH:mm:ss", "2026-11-20 1:15:30"),
    ("yyyy-MM-dd HH", "2026-11-20 07"),
    ("yyyy-MM-dd HH", "2026-11-20 24"),
    ("yyyy-MM-dd HH", "9999-12-31 24"),
    ("yyyy-MM-dd HH", "2026-11-20 25"),
    ("yyyy-MM-dd H:m:s", "2026-11-20 7:5:3"),
    ("yyyy-MM-dd H:m:s", "2026-11-20 07:05:03"),
    ("yyyy-MM-dd H:m:s", "2026-11-20 -7:5:3"),
    ("yyyy/MM/dd'T'HH", "2026/11/20T10"),
    ("yyyy/MM/dd'T'HH", "2026/11/20t10"),
    ("yyyy-MM-dd'T'HH:mm:ss'Z'", "2026-11-20T10:15:30Z"),
    ("yyyy-MM-dd'T'HH:mm:ss", "2026-11-20T10:15:30.5"),
    ("yyyy.MM.dd HH", "2026.11.20 08"),
    ("HH:mm", "10:15"),
    # Incomplete times: Java keeps only the date (midnight) or fails validation.
    ("yyyy-MM-dd HH:ss", "2026-11-20 10:30"),
    ("yyyy-MM-dd mm:ss", "2026-11-20 10:30"),
    ("yyyy-MM-dd mm:ss", "2026-11-20 70:30"),
    ("yyyy-MM-dd HH:mm.SSS", "2026-11-20 10:11.123"),
    ("ss.SSS yyyy-MM-dd", "07.123 2026-11-20"),
    ("ss.SSS yyyy-MM-dd", "61.123 2026-11-20"),
    ("yyyy-MM-dd hh:mm", "2026-11-20 11:75"),
    # Fractions: exactly as many digits as letters.
    ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2026-11-20T10:15:30.123"),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2026-11-20T10:15:30.12"),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2026-11-20T10:15:30.1234"),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2026-11-20T10:15:30.-12"),
    ("yyyy-MM-dd HH:mm:ss.SSSSSSSSS", "2026-11-20 10:15:30.123456789"),
    ("yyyy-MM-dd HH:mm:ss.S", "2026-11-20 10:15:30.7"),
    # Month names: Locale.ROOT, case-sensitive, and 'MMMM' is the short form there.
    ("yyyy-MMM-dd", "2026-Nov-20"),
    ("yyyy-MMM-dd", "2026-nov-20"),
    ("yyyy-MMM-dd", "2026-NOV-20"),
    ("yyyy-MMMM-dd", "2026-Sep-20"),
    ("yyyy-MMMM-dd", "2026-September-20"),
    ("dd MMM yyyy", "20 May 2026"),
    ("ddMMMyyyy", "20Nov2026"),
    # 12-hour clock and AM/PM.
    ("yyyy-MM-dd hh:mm a", "2026-11-20 12:30 AM"),
    ("yyyy-MM-dd hh:mm a", "2026-11-20 12:30 PM"),
    ("yyyy-MM-dd hh:mm a", "2026-11-20 01:30 PM"),
    ("yyyy-MM-dd hh:mm a", "2026-11-20 01:30 pm"),
    ("yyyy-MM-dd hh:mm a", "2026-11-20 13:30 PM"),
    ("yyyy-MM-dd hh:mm a", "2026-11-20 00:30 PM"),
    ("yyyy-MM-dd h a", "2026-11-20 7 PM"),
    ("yyyy-MM-dd hh", "2026-11-20 11"),
    ("yyyy-MM-dd hh", "2026-11-20 13"),
    ("yyyy-MM-dd a", "2026-11-20 PM"),
    ("yyyy-MM-dd HH a", "2026-11-20 13 AM"),
    ("yyyy-MM-dd HH a", "2026-11-20 13 PM"),
    ("yyyy-MM-dd HH hh", "2026-11-20 13 01"),
    ("yyyy-MM-dd HH hh", "2026-11-20 13 02"),
    # Optional sections, nested and unterminated.
    ("yyyy-MM-dd[ HH:mm:ss]", "2026-11-20"),
    ("yyyy-MM-dd[ HH:mm:ss]", "2026-11-20 10:15:30"),
    ("yyyy-MM-dd[ HH:mm:ss]", "2026-11-20 10:15"),
    ("yyyy-MM-dd[ HH[:mm[:ss]]]", "2026-11-20 10"),
    ("yyyy-MM-dd[ HH[:mm[:ss]]]", "2026-11-20 10:15"),
    ("yyyy-MM-dd[ HH[:mm[:ss]]]", "2026-11-20 10:15:30"),
    ("yyyy-MM-dd[ HH:mm][ HH]", "2026-11-20 10"),
    ("yyyy-MM-dd[ HH", "2026-11-20 10"),
    ("yyyy-MM-dd[ HH]", "2026-11-20 1"),
    ("yyyy[-MM-dd]", "2026"),
    ("[yyyy-MM-dd][yyyyMMdd]", "20261120"),
    # Quotes and literal characters.
    ("yyyy'-'MM'-'dd", "2026-11-20"),
    ("yyyy''MM''dd", "2026'11'20"),
    ("'year='yyyy'/month='MM'/day='dd", "year=2026/month=11/day=20"),
    ("'it''s' yyyy-MM-dd", "it's 2026-11-20"),
    ("yyyy_MM_dd", "2026_11_20"),
    ("yyyy年MM月dd日", "2026年11月20日"),
    # The same field twice; year-of-era together with year.
    ("yyyy-MM-dd yyyy", "2026-11-20 2026"),
    ("yyyy-MM-dd yyyy", "2026-11-20 2027"),
    ("yyyy-MM-dd uuuu", "2026-11-20 2026"),
    ("yyyy-MM-dd uuuu", "2026-11-20 2025"),
    # 'k' (clock hour 1-24), 'K' (hour 0-11 of AM/PM, with 'a'), 'n' (nano-of-second).
    ("yyyy-MM-dd kk", "2026-11-20 24"),
    ("yyyy-MM-dd kk", "2026-11-20 01"),
    ("yyyy-MM-dd kk", "2026-11-20 00"),
    ("yyyy-MM-dd kk", "2026-11-20 25"),
    ("yyyy-MM-dd k:mm", "2026-11-20 24:30"),
    ("yyyy-MM-dd kk HH", "2026-11-20 24 00"),
    ("yyyy-MM-dd kk HH", "2026-11-20 24 23"),
    ("yyyy-MM-dd KK a", "2026-11-20 11 PM"),
    ("yyyy-MM-dd KK a", "2026-11-20 00 AM"),
    ("yyyy-MM-dd KK a", "2026-11-20 12 PM"),
    ("yyyy-MM-dd K", "2026-11-20 5"),
    ("yyyy-MM-dd K", "2026-11-20 13"),
    ("yyyy-MM-dd K:mm a", "2026-11-20 7:05 PM"),
    ("yyyy-MM-dd HH:mm:ss n", "2026-11-20 10:15:30 123456789"),
    ("yyyy-MM-dd HH:mm:ss n", "2026-11-20 10:15:30 5"),
    ("yyyy-MM-dd HH:mm:ss n", "2026-11-20 10:15:30 +5"),
    ("yyyyMMddHHmmss" + "n" * 19, "20261120101530" + "0" * 18 + "7"),
    ("yyyy-MM-dd HH:mm:ss n", "2026-11-20 10:15:30 1234567890"),
    ("yyyy-MM-dd HH:mm:ss nnnnnnnnn", "2026-11-20 10:15:30 000000007"),
    ("yyyy-MM-dd HH:mm:ss nnn", "2026-11-20 10:15:30 7"),
    ("yyyy-MM-dd HH:mm:ss nnn", "2026-11-20 10:15:30 1234"),
    ("yyyy-MM-dd HH:mm:ss nn", "2026-11-20 10:15:30 +12"),
    ("yyyyMMddHHmmssnnn", "20261120101530123"),
    ("yyyy-MM-dd HH n", "2026-11-20 10 5"),
    ("yyyy-MM-dd HH:mm:ss.SSS n", "2026-11-20 10:15:30.123 123000000"),
    ("yyyy-MM-dd HH:mm:ss.SSS n", "2026-11-20 10:15:30.123 5"),
]

# Patterns both java.time and JavaDateTimeFormatter must refuse.
MALFORMED = [
    "yyyy-MM-ddd",
    "yyyy-MM-dd HHH",
    "yyyy-MM-dd'T",
    "yyyy-MM-dd]",
    "yyyy{MM}",
    "yyyy#MM",
    "yyyy-MM-dd aa",
    "yyyy-MMMMMM-dd",
    "ss.SSSSSSSSSS",
    "yyyy-MM-dd kkk",
    "yyyy-MM-dd KKK",
    "n" * 20,
    "y" * 20,
]

_JAVA_SOURCE = r"""
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/** Reads "pattern TAB text" lines, prints what Flink's DefaultPartTimeExtractor makes of each. */
public class FlinkPartitionTime {
    public static void main(String[] args) throws Exception {
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            int tab = line.indexOf('\t');
            out.append(convert(line.substring(0, tab), line.substring(tab + 1))).append('\n');
        }
        System.out.print(out);
    }

    static String convert(String pattern, String text) {
        DateTimeFormatter formatter;
        try {
            formatter = DateTimeFormatter.ofPattern(pattern, Locale.ROOT);
        } catch (IllegalArgumentException e) {
            return "BADPATTERN";
        }
        LocalDateTime result;
        try {
            // DefaultPartTimeExtractor.toLocalDateTime
            try {
                result = LocalDateTime.parse(text, formatter);
            } catch (DateTimeParseException e) {
                result = LocalDateTime.of(LocalDate.parse(text, formatter), LocalTime.MIDNIGHT);
            }
        } catch (DateTimeParseException e) {
            return "ERROR";
        }
        return "OK " + result.getYear() + " " + result.getMonthValue() + " "
                + result.getDayOfMonth() + " " + result.getHour() + " " + result.getMinute()
                + " " + result.getSecond() + " " + result.getNano();
    }
}
"""


@pytest.fixture(scope="session")
def java_results(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], str]:
    """Compile and run the Java oracle once, for every case; map (pattern, text) to its line."""
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.skip("needs a JDK (javac and java on PATH) for the differential test")
    workdir = tmp_path_factory.mktemp("java-oracle")
    (workdir / "FlinkPartitionTime.java").write_text(_JAVA_SOURCE, encoding="utf-8")
    subprocess.run(
        [javac, "-encoding", "UTF-8", "-d", str(workdir), str(workdir / "FlinkPartitionTime.java")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    queries = CASES + [(pattern, "2026-11-20") for pattern in MALFORMED]
    for pattern, text in queries:
        assert not any(c in pattern + text for c in "\t\r\n"), (pattern, text)
    stdin = "".join(f"{pattern}\t{text}\n" for pattern, text in queries)
    completed = subprocess.run(
        [
            java,
            "-Xshare:auto",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            str(workdir),
            "FlinkPartitionTime",
        ],
        input=stdin.encode("utf-8"),
        check=True,
        capture_output=True,
        timeout=120,
    )
    lines = completed.stdout.decode("utf-8").splitlines()
    assert len(lines) == len(queries), completed.stderr.decode("utf-8", "replace")
    return dict(zip(queries, lines, strict=True))


def test_cases_are_unique() -> None:
    assert len(set(CASES)) == len(CASES)


def _case_id(case: tuple[str, str]) -> str:
    return f"{case[0]!r}<-{case[1]!r}"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_parse_matches_java(case: tuple[str, str], java_results: dict) -> None:
    pattern, text = case
    answer = java_results[case]
    formatter = JavaDateTimeFormatter(pattern)
    if answer == "ERROR":
        with pytest.raises(ValueError, match=r"^cannot parse "):
            formatter.parse(text)
        return
    kind, *numbers = answer.split()
    assert kind == "OK", answer
    year, month, day, hour, minute, second, nano = map(int, numbers)
    if not datetime.MINYEAR <= year <= datetime.MAXYEAR:
        # Java can go where Python's datetime cannot: that must be an error, not a guess.
        with pytest.raises(ValueError, match="outside the range of Python's datetime"):
            formatter.parse(text)
        return
    expected = datetime.datetime(year, month, day, hour, minute, second, nano // 1000)
    assert formatter.parse(text) == expected


@pytest.mark.parametrize("pattern", MALFORMED)
def test_malformed_patterns_are_refused_like_java(pattern: str, java_results: dict) -> None:
    assert java_results[(pattern, "2026-11-20")] == "BADPATTERN"
    with pytest.raises(ValueError, match="timestamp formatter"):
        JavaDateTimeFormatter(pattern)
