"""Parse partition timestamps exactly as Flink's ``timestamp-formatter`` option does.

Flink's ``DefaultPartTimeExtractor`` turns the timestamp string built from partition
values into a time with ``DateTimeFormatter.ofPattern(pattern, Locale.ROOT)``: it tries
``LocalDateTime.parse(text, formatter)`` and, when that fails, falls back to
``LocalDate.parse(text, formatter)`` at midnight. A partition is committed when that
time plus the commit delay has passed, so if this provider read the same partition
values differently from Flink (a different day, or "unparseable" where Flink succeeds)
it would commit partitions Flink would not, or never commit ones Flink would. Python's
``strptime`` has a different pattern language and different rules (it is lenient about
widths, knows nothing of Java's adjacent value parsing or of the SMART resolver), so this
module re-implements the relevant subset of ``java.time`` instead of translating
patterns to ``strptime``.

What is reproduced, and why it matters:

* Parsing is strict and never backtracks, like ``DateTimeFormatter``: every element
  consumes what it can and a later failure is not retried with a shorter match. The
  pattern is compiled once to a regular expression made of atomic groups, which gives
  the same commit-once behaviour.
* Adjacent value parsing: in ``yyyyMMdd`` the variable-width year leaves room for the
  fixed-width fields after it, so ``20261120`` is 2026-11-20.
* Signs, minimum and maximum widths follow the ``SignStyle`` Java attaches to each letter
  (``yyyy`` takes more than four digits only after a ``+``, for example).
* Resolution follows ``ResolverStyle.SMART``: a day-of-month up to 31 is clamped to the
  end of its month (``2026-02-30`` is 2026-02-28), ``24:00`` is midnight of the next
  day, missing minutes and seconds default to zero, and an incomplete time (a minute
  without an hour, an hour without AM/PM for ``h``) leaves only the date, i.e. midnight.
* Month and AM/PM names are those of ``Locale.ROOT``, which is what Flink passes: there
  ``MMM`` and ``MMMM`` both mean ``Jan`` .. ``Dec`` (case-sensitive), and ``a`` means
  ``AM``/``PM``.

Known differences, all of which only turn a Flink success into a ``ValueError``:
Python's ``datetime`` only holds years 1..9999 (Java accepts year 0, negative years with
``u`` and years above 9999), and its precision is the microsecond (extra fraction
digits are truncated). A field given twice with different values inside an optional
section makes Java drop that section; here the whole parse fails.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime
import enum
import re
from typing import Union

__all__ = ["JavaDateTimeFormatter"]

_SUPPORTED_LETTERS = "y u M d H h k K a m s S n"
"""Pattern letters this module understands; any other ASCII letter is rejected."""

# Locale.ROOT texts (CLDR root data, as shipped by Java 9 and later): abbreviated and
# full month names are the same, so 'MMMM' does *not* accept "January".
_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_AMPM_NAMES = ("AM", "PM")

_REDUCED_BASE_YEAR = 2000  # 'yy' means 2000..2099, as Java's ReducedPrinterParser.BASE_DATE


class _Field(enum.Enum):
    """The ``ChronoField`` values the supported letters produce, with Java's valid ranges.

    The ranges are the ones ``ChronoField.checkValidValue`` enforces while resolving, so
    out-of-range values fail at the same point (resolution, not matching) as in Java.
    """

    YEAR_OF_ERA = ("year-of-era", 1, 1_000_000_000, False)
    YEAR = ("year", -999_999_999, 999_999_999, False)
    MONTH_OF_YEAR = ("month-of-year", 1, 12, False)
    DAY_OF_MONTH = ("day-of-month", 1, 31, False)
    AMPM_OF_DAY = ("AM/PM-of-day", 0, 1, True)
    CLOCK_HOUR_OF_DAY = ("clock-hour-of-day", 1, 24, True)
    CLOCK_HOUR_OF_AMPM = ("clock-hour-of-AM/PM", 1, 12, True)
    HOUR_OF_AMPM = ("hour-of-AM/PM", 0, 11, True)
    HOUR_OF_DAY = ("hour-of-day", 0, 23, True)
    MINUTE_OF_HOUR = ("minute-of-hour", 0, 59, True)
    SECOND_OF_MINUTE = ("second-of-minute", 0, 59, True)
    NANO_OF_SECOND = ("nano-of-second", 0, 999_999_999, True)

    def __init__(self, label: str, minimum: int, maximum: int, time_based: bool) -> None:
        self.label = label
        self.minimum = minimum
        self.maximum = maximum
        self.time_based = time_based

    def check(self, value: int) -> int:
        """Return ``value`` if Java's range check for this field accepts it."""
        if not self.minimum <= value <= self.maximum:
            raise _ResolveError(
                f"invalid value for {self.label} (valid values {self.minimum} - "
                f"{self.maximum}): {value}"
            )
        return value


class _Sign(enum.Enum):
    """The subset of ``java.time.format.SignStyle`` that ``ofPattern`` uses."""

    NORMAL = "normal"  # '-' accepted, '+' rejected
    NOT_NEGATIVE = "not-negative"  # no sign at all
    EXCEEDS_PAD = "exceeds-pad"  # '+' required (and only allowed) beyond the minimum width


class _Kind(enum.Enum):
    """How the digits of a numeric element become a field value."""

    VALUE = "value"  # the number itself
    REDUCED = "reduced"  # two digits relative to the base year ('yy')
    FRACTION = "fraction"  # fraction of a second scaled to nanoseconds ('S...')


@dataclasses.dataclass(frozen=True)
class _Literal:
    text: str


@dataclasses.dataclass(frozen=True)
class _Number:
    """Java's ``NumberPrinterParser`` (and its reduced and fraction variants).

    ``subsequent`` is Java's ``subsequentWidth``: the number of digits reserved for the
    fixed-width fields that directly follow this variable-width one (adjacent value
    parsing); 0 or -1 mean no reservation.
    """

    field: _Field
    min_width: int
    max_width: int
    sign: _Sign
    kind: _Kind = _Kind.VALUE
    subsequent: int = 0

    @property
    def fixed_width(self) -> bool:
        """Whether Java lets this element join a preceding variable-width field."""
        return self.min_width == self.max_width and self.sign is _Sign.NOT_NEGATIVE


@dataclasses.dataclass(frozen=True)
class _Text:
    field: _Field
    names: tuple[str, ...]  # the name of value i + offset
    offset: int


@dataclasses.dataclass(frozen=True)
class _Optional:
    elements: tuple[_Element, ...]


_Element = Union[_Literal, _Number, _Text, _Optional]


class _ResolveError(Exception):
    """A field combination Java's SMART resolver rejects (carries the reason only)."""


class _Section:
    """One level of ``DateTimeFormatterBuilder``: the top level or an optional section.

    ``value_index`` mirrors the builder's ``valueParserIndex``, the variable-width
    numeric element that following fixed-width ones reserve digits from. Anything that
    is not a numeric element (literal, text, section boundary) ends the reservation,
    exactly as in Java, because that decides how many digits a year may take.
    """

    def __init__(self, parent: _Section | None) -> None:
        self.parent = parent
        self.elements: list[_Element] = []
        self.value_index = -1

    def append(self, element: _Element) -> int:
        self.elements.append(element)
        self.value_index = -1
        return len(self.elements) - 1

    def append_number(self, number: _Number) -> None:
        # DateTimeFormatterBuilder.appendValue(NumberPrinterParser)
        if self.value_index < 0:
            self.value_index = self.append(number)
            return
        base_index = self.value_index
        base = self.elements[base_index]
        assert isinstance(base, _Number)
        if number.fixed_width:
            base = dataclasses.replace(base, subsequent=base.subsequent + number.max_width)
            self.append(dataclasses.replace(number, subsequent=-1))
            self.value_index = base_index
        else:
            base = dataclasses.replace(base, subsequent=-1)
            self.value_index = self.append(number)
        self.elements[base_index] = base


class JavaDateTimeFormatter:
    """A Java ``DateTimeFormatter.ofPattern`` pattern, parsing as Flink does.

    Construct it once per pattern (the pattern is validated and compiled here, so a bad
    table option is reported when the configuration is read, not at the first partition)
    and call :meth:`parse` for each timestamp string.
    """

    def __init__(self, pattern: str) -> None:
        """Compile ``pattern``.

        Raises ``ValueError`` naming the offending letter and the pattern when the pattern
        is malformed (Java would reject it as well) or uses a letter outside
        ``y u M d H h a m s S``: accepting a pattern this module cannot interpret
        faithfully would silently compute partition times Flink would not.
        """
        if not isinstance(pattern, str):
            raise TypeError(f"timestamp formatter must be a str, not {type(pattern).__name__}")
        self._pattern = pattern
        self._groups: dict[str, _Number | _Text] = {}
        self._atomic_groups = 0
        elements = _build(pattern)
        self._regex = re.compile(self._to_regex(elements))

    @property
    def pattern(self) -> str:
        """The Java pattern this formatter was built from."""
        return self._pattern

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._pattern!r})"

    def parse(self, text: str) -> datetime.datetime:
        """Parse ``text`` to a naive ``datetime`` with Flink's rule.

        The result is what ``LocalDateTime.parse(text, formatter)`` returns, or, when the
        text has no (complete) time, ``LocalDate.parse(text, formatter)`` at midnight.
        Raises ``ValueError`` naming the text and the pattern when Flink would fail too (or
        when the result does not fit in a Python ``datetime``), so callers can report the
        partition instead of guessing a time for it.
        """
        match = self._regex.fullmatch(text)
        if match is None:
            raise self._error(text, "the text does not match the pattern")
        fields: dict[_Field, int] = {}
        for group, element in self._groups.items():
            raw = match.group(group)
            if raw is None:  # in an optional section that was skipped
                continue
            field = element.field
            value = _convert(element, raw)
            previous = fields.setdefault(field, value)
            if previous != value:
                raise self._error(
                    text, f"{field.label} parsed twice with different values: {previous}, {value}"
                )
        try:
            return _resolve(fields)
        except _ResolveError as exc:
            raise self._error(text, str(exc)) from None

    def _error(self, text: str, reason: str) -> ValueError:
        return ValueError(
            f"cannot parse {text!r} with timestamp formatter {self._pattern!r}: {reason}"
        )

    def _to_regex(self, elements: tuple[_Element, ...] | list[_Element]) -> str:
        """Translate elements to a regex of atomic groups (no backtracking, like Java)."""
        parts = []
        for element in elements:
            if isinstance(element, _Literal):
                parts.append(re.escape(element.text))
            elif isinstance(element, _Optional):
                parts.append(self._atomic(f"(?:{self._to_regex(element.elements)})?"))
            else:
                group = f"g{len(self._groups)}"
                self._groups[group] = element
                if isinstance(element, _Text):
                    # Java tries the longest name first and keeps the first that matches.
                    names = sorted(element.names, key=len, reverse=True)
                    body = "|".join(re.escape(name) for name in names)
                else:
                    body = _number_regex(element)
                parts.append(self._atomic(f"(?P<{group}>{body})"))
        return "".join(parts)

    def _atomic(self, body: str) -> str:
        """An atomic group, ``(?>body)``, in a form Python's ``re`` takes before 3.11 too.

        A look-ahead never backtracks into what it matched, and the back-reference then
        consumes exactly that: the same match as ``(?>body)`` on every Python we support.
        """
        name = f"a{self._atomic_groups}"
        self._atomic_groups += 1
        return f"(?=(?P<{name}>{body}))(?P={name})"


def _number_regex(number: _Number) -> str:
    """The regex for one numeric element, reproducing ``NumberPrinterParser.parse``.

    Java reads up to ``max_width + subsequent`` digits, keeps all but the ``subsequent``
    reserved ones (at least ``min_width``), and then applies the sign rules; the
    look-aheads below encode the same arithmetic for a regex engine.
    """
    low, high = number.min_width, number.max_width
    if number.kind is _Kind.FRACTION:  # FractionPrinterParser ignores reservations
        return f"[0-9]{{{low}}}"
    reserved = max(number.subsequent, 0)
    reserve = f"(?=[0-9]{{{reserved}}})" if reserved else ""
    digits = f"[0-9]{{{low}}}" if low == high else f"[0-9]{{{low},{high}}}"
    digits += reserve
    if number.sign is _Sign.NOT_NEGATIVE:
        return digits
    # '-' must be followed by a non-zero value within the digits this field keeps
    # (strict parsing rejects "-0").
    rest = f"[0-9]{{{reserved}}}" if reserved else ""
    negative = f"-(?=0{{0,{high - 1}}}[1-9]{rest}){digits}"
    if number.sign is _Sign.NORMAL:
        return f"{negative}|{digits}"
    # EXCEEDS_PAD: without a sign exactly min_width digits; more only after a '+'.
    exact = f"(?={rest}(?![0-9]))" if rest else "(?![0-9])"
    alternatives = [negative, f"[0-9]{{{low}}}{exact}"]
    if low < high:
        alternatives.insert(0, f"\\+[0-9]{{{low + 1},{high}}}{reserve}")
    return "|".join(alternatives)


def _convert(element: _Number | _Text, raw: str) -> int:
    """Turn matched text into the value Java stores for the field while parsing."""
    if isinstance(element, _Text):
        return element.names.index(raw) + element.offset
    if element.kind is _Kind.FRACTION:
        return int(raw.ljust(9, "0"))
    if element.kind is _Kind.REDUCED:
        return _REDUCED_BASE_YEAR + int(raw)
    return int(raw)


def _build(pattern: str) -> tuple[_Element, ...]:
    """Parse the pattern like ``DateTimeFormatterBuilder.appendPattern``."""
    section = _Section(None)
    pos = 0
    length = len(pattern)
    while pos < length:
        char = pattern[pos]
        if "A" <= char <= "Z" or "a" <= char <= "z":
            start = pos
            while pos < length and pattern[pos] == char:
                pos += 1
            _append_letter(section, char, pos - start, pattern)
            continue
        if char == "'":
            end = pos + 1
            while end < length:
                if pattern[end] == "'":
                    if end + 1 < length and pattern[end + 1] == "'":
                        end += 1
                    else:
                        break
                end += 1
            if end >= length:
                raise ValueError(
                    f"unterminated quoted literal at index {pos} in timestamp formatter {pattern!r}"
                )
            quoted = pattern[pos + 1 : end]
            section.append(_Literal("'" if not quoted else quoted.replace("''", "'")))
            pos = end + 1
            continue
        if char == "[":
            section.value_index = -1
            section = _Section(section)
        elif char == "]":
            if section.parent is None:
                raise ValueError(
                    f"']' at index {pos} without a preceding '[' in timestamp formatter {pattern!r}"
                )
            section = _close(section)
        elif char in "{}#":
            raise ValueError(f"reserved character {char!r} in timestamp formatter {pattern!r}")
        else:
            section.append(_Literal(char))
        pos += 1
    while section.parent is not None:  # Java closes unterminated optional sections
        section = _close(section)
    return tuple(section.elements)


def _close(section: _Section) -> _Section:
    """End an optional section (``optionalEnd``); an empty one leaves nothing behind."""
    parent = section.parent
    assert parent is not None
    if section.elements:
        parent.append(_Optional(tuple(section.elements)))
    return parent


def _append_letter(section: _Section, letter: str, count: int, pattern: str) -> None:
    """Append the element for a run of ``count`` copies of ``letter`` (Java's parseField)."""

    def too_many() -> ValueError:
        return ValueError(
            f"too many pattern letters {letter * count!r} for letter {letter!r} in "
            f"timestamp formatter {pattern!r}"
        )

    if letter in "yu":
        field = _Field.YEAR_OF_ERA if letter == "y" else _Field.YEAR
        if count > 19:
            raise too_many()
        if count == 2:
            section.append_number(_Number(field, 2, 2, _Sign.NOT_NEGATIVE, _Kind.REDUCED))
        elif count < 4:
            section.append_number(_Number(field, count, 19, _Sign.NORMAL))
        else:
            section.append_number(_Number(field, count, 19, _Sign.EXCEEDS_PAD))
    elif letter == "M":
        if count == 1:
            section.append_number(_Number(_Field.MONTH_OF_YEAR, 1, 19, _Sign.NORMAL))
        elif count == 2:
            section.append_number(_Number(_Field.MONTH_OF_YEAR, 2, 2, _Sign.NOT_NEGATIVE))
        elif count in (3, 4):
            section.append(_Text(_Field.MONTH_OF_YEAR, _MONTH_NAMES, 1))
        elif count == 5:
            raise ValueError(
                f"narrow month names ('MMMMM') are not supported in timestamp formatter "
                f"{pattern!r}; use 'M', 'MM', 'MMM' or 'MMMM'"
            )
        else:
            raise too_many()
    elif letter in "dHhkKms":
        field = {
            "d": _Field.DAY_OF_MONTH,
            "H": _Field.HOUR_OF_DAY,
            "h": _Field.CLOCK_HOUR_OF_AMPM,
            "k": _Field.CLOCK_HOUR_OF_DAY,
            "K": _Field.HOUR_OF_AMPM,
            "m": _Field.MINUTE_OF_HOUR,
            "s": _Field.SECOND_OF_MINUTE,
        }[letter]
        if count == 1:
            section.append_number(_Number(field, 1, 19, _Sign.NORMAL))
        elif count == 2:
            section.append_number(_Number(field, 2, 2, _Sign.NOT_NEGATIVE))
        else:
            raise too_many()
    elif letter == "a":
        if count != 1:
            raise too_many()
        section.append(_Text(_Field.AMPM_OF_DAY, _AMPM_NAMES, 0))
    elif letter == "S":
        if count > 9:
            raise too_many()
        section.append_number(
            _Number(_Field.NANO_OF_SECOND, count, count, _Sign.NOT_NEGATIVE, _Kind.FRACTION)
        )
    elif letter == "n":  # nano-of-second as a plain number, not a fraction
        if count > 19:
            raise too_many()
        section.append_number(_Number(_Field.NANO_OF_SECOND, count, 19, _Sign.NOT_NEGATIVE))
    else:
        raise ValueError(
            f"unsupported letter {letter!r} in timestamp formatter {pattern!r}; "
            f"supported: {_SUPPORTED_LETTERS} (quote literal letters, e.g. 'T')"
        )


_CLOCK = (
    _Field.HOUR_OF_DAY,
    _Field.MINUTE_OF_HOUR,
    _Field.SECOND_OF_MINUTE,
    _Field.NANO_OF_SECOND,
)
"""The fields of a complete time, in the order :func:`_resolve_time` takes them."""

_Time = tuple[tuple[int, ...], int]
"""A resolved time (hour, minute, second, nano) and the days it spills over (``24:00``)."""


def _add(fields: dict[_Field, int], field: _Field, value: int) -> None:
    """Store a derived value, failing on a conflict (``updateCheckConflict``)."""
    previous = fields.setdefault(field, value)
    if previous != value:
        raise _ResolveError(
            f"conflict found: {field.label} {previous} differs from {field.label} {value}"
        )


def _resolve_time(hour: int, minute: int, second: int, nano: int) -> _Time:
    """``Parsed.resolveTime`` in SMART mode: the time and the days it spills over."""
    _Field.MINUTE_OF_HOUR.check(minute)
    _Field.NANO_OF_SECOND.check(nano)
    if hour == 24 and minute == 0 and second == 0 and nano == 0:
        return (0, 0, 0, 0), 1  # SMART accepts 24:00 as the end of the day
    _Field.HOUR_OF_DAY.check(hour)
    _Field.SECOND_OF_MINUTE.check(second)
    return (hour, minute, second, nano), 0


def _resolve(parsed: dict[_Field, int]) -> datetime.datetime:
    """Resolve parsed fields like ``Parsed.resolve`` with ``ResolverStyle.SMART``.

    The steps and their order follow the JDK so that the same inputs fail and the same
    incomplete inputs fall back to the date alone: each step below takes the fields it
    resolves out of ``fields`` and the later steps see what is left.
    """
    fields = dict(parsed)
    date = _resolve_date(fields)
    time = _resolve_time_lenient(fields, _resolve_time_fields(fields))
    if time is not None:
        _cross_check(fields, time[0])
    return _combine(date, time)


def _resolve_date(fields: dict[_Field, int]) -> tuple[int, int, int] | None:
    """The date, as ``AbstractChronology.resolveDate`` makes it (``resolveYMD``).

    None when year, month and day-of-month are not all there; that only fails later
    (:func:`_combine`), after the time fields were checked, which is the JDK's order of
    errors.
    """
    year_of_era = fields.pop(_Field.YEAR_OF_ERA, None)
    if year_of_era is not None:
        _Field.YEAR_OF_ERA.check(year_of_era)
        year = fields.get(_Field.YEAR)
        _add(fields, _Field.YEAR, year_of_era if year is None or year > 0 else 1 - year_of_era)
    if not {_Field.YEAR, _Field.MONTH_OF_YEAR, _Field.DAY_OF_MONTH} <= fields.keys():
        return None
    year = _Field.YEAR.check(fields.pop(_Field.YEAR))
    month = _Field.MONTH_OF_YEAR.check(fields.pop(_Field.MONTH_OF_YEAR))
    day = _Field.DAY_OF_MONTH.check(fields.pop(_Field.DAY_OF_MONTH))
    # SMART: a day-of-month up to 31 is moved back to the last day of the month.
    if month in (4, 6, 9, 11):
        day = min(day, 30)
    elif month == 2:
        day = min(day, 29 if calendar.isleap(year) else 28)
    return year, month, day


def _resolve_time_fields(fields: dict[_Field, int]) -> _Time | None:
    """``Parsed.resolveTimeFields``: clock hours and AM/PM become the hour-of-day.

    Resolves the time only when all four clock fields are present; the lenient step
    (:func:`_resolve_time_lenient`) decides what a partial time means.
    """
    if _Field.CLOCK_HOUR_OF_DAY in fields:
        clock_hour = fields.pop(_Field.CLOCK_HOUR_OF_DAY)
        if clock_hour != 0:  # SMART lets 0 through as hour 0
            _Field.CLOCK_HOUR_OF_DAY.check(clock_hour)
        _add(fields, _Field.HOUR_OF_DAY, 0 if clock_hour == 24 else clock_hour)
    if _Field.CLOCK_HOUR_OF_AMPM in fields:
        clock_hour = fields.pop(_Field.CLOCK_HOUR_OF_AMPM)
        if clock_hour != 0:  # SMART lets 0 through as hour 0
            _Field.CLOCK_HOUR_OF_AMPM.check(clock_hour)
        _add(fields, _Field.HOUR_OF_AMPM, 0 if clock_hour == 12 else clock_hour)
    if _Field.AMPM_OF_DAY in fields and _Field.HOUR_OF_AMPM in fields:
        ampm = _Field.AMPM_OF_DAY.check(fields.pop(_Field.AMPM_OF_DAY))
        hour_of_ampm = _Field.HOUR_OF_AMPM.check(fields.pop(_Field.HOUR_OF_AMPM))
        _add(fields, _Field.HOUR_OF_DAY, ampm * 12 + hour_of_ampm)
    if _Field.NANO_OF_SECOND in fields:
        _Field.NANO_OF_SECOND.check(fields[_Field.NANO_OF_SECOND])
    if not all(field in fields for field in _CLOCK):
        return None
    return _resolve_time(*(fields.pop(field) for field in _CLOCK))


def _resolve_time_lenient(fields: dict[_Field, int], time: _Time | None) -> _Time | None:
    """``Parsed.resolveTimeLenient``: default what can be defaulted, give up otherwise.

    Then the time-based fields left over are range-checked, except after giving up on a
    time with a gap in it: Java returns before that check, so such fields never fail the
    parse (only the date is used).
    """
    if time is None:
        if not any(field in fields for field in _CLOCK) and _Field.AMPM_OF_DAY in fields:
            # An AM/PM marker alone means the middle of that half of the day.
            ampm = _Field.AMPM_OF_DAY.check(fields.pop(_Field.AMPM_OF_DAY))
            time = _resolve_time(ampm * 12 + 6, 0, 0, 0)
        hour = fields.get(_Field.HOUR_OF_DAY)
        if hour is not None:
            minute = fields.get(_Field.MINUTE_OF_HOUR)
            second = fields.get(_Field.SECOND_OF_MINUTE)
            nano = fields.get(_Field.NANO_OF_SECOND)
            if (minute is None and (second is not None or nano is not None)) or (
                minute is not None and second is None and nano is not None
            ):
                # e.g. hour and second without minute: Java leaves the time unresolved
                # (and unvalidated), so only the date is used.
                return time
            time = _resolve_time(hour, minute or 0, second or 0, nano or 0)
            for field in _CLOCK:
                fields.pop(field, None)
    for field, value in fields.items():
        if field.time_based:
            field.check(value)
    return time


def _cross_check(fields: dict[_Field, int], clock: tuple[int, ...]) -> None:
    """``Parsed.crossCheck``: leftovers (AM/PM next to 'H', say) must agree with the time."""
    hour, minute, second, nano = clock
    derived = {
        _Field.AMPM_OF_DAY: hour // 12,
        _Field.HOUR_OF_AMPM: hour % 12,
        _Field.HOUR_OF_DAY: hour,
        _Field.MINUTE_OF_HOUR: minute,
        _Field.SECOND_OF_MINUTE: second,
        _Field.NANO_OF_SECOND: nano,
    }
    for field, value in derived.items():
        if field in fields and fields[field] != value:
            raise _ResolveError(
                f"conflict found: {field.label} {fields[field]} differs from "
                f"{field.label} {value} derived from the time"
            )


def _combine(date: tuple[int, int, int] | None, time: _Time | None) -> datetime.datetime:
    """The ``datetime`` Flink gets: ``LocalDateTime``, else ``LocalDate`` at midnight.

    Fails where Java would (no complete date) and where Python's ``datetime`` cannot hold
    what Java can (years outside 1..9999, ``24:00`` on its last day).
    """
    if date is None:
        raise _ResolveError(
            "the pattern does not yield a complete date (year, month and day-of-month)"
        )
    year, month, day = date
    if not datetime.MINYEAR <= year <= datetime.MAXYEAR:
        raise _ResolveError(
            f"year {year} is outside the range of Python's datetime "
            f"({datetime.MINYEAR}..{datetime.MAXYEAR})"
        )
    if time is None:  # Flink: LocalDate.parse(...) at midnight
        return datetime.datetime(year, month, day)
    (hour, minute, second, nano), excess_days = time
    result = datetime.datetime(year, month, day, hour, minute, second, nano // 1000)
    try:
        return result + datetime.timedelta(days=excess_days)
    except OverflowError:
        raise _ResolveError(
            f"{result.date()} plus {excess_days} day is outside the range of Python's datetime"
        ) from None
