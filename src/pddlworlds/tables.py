"""Printing rows three ways: a rich table for people, CSV and JSON for programs (`--format`).

A rich table is cut to fit the terminal. Piped or redirected there is no terminal width to fit, so the
table is drawn at its natural width and every value stays whole: `pddlworlds list | grep problem10` finds
the problem. CSV and JSON carry the rows' own keys and values (the same dicts the Python API returns),
not the table's display text.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from .printable import printable

__all__ = ["FORMATS", "Column", "add_format_option", "csv_cell", "make_console", "print_rows", "rich_table"]

#: What `--format` takes; "table" is the default.
FORMATS = ("table", "csv", "json")


#: What a spreadsheet reads as the start of a formula (tab and carriage return: what some strip first).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """`value` as a CSV cell: a list or an object as JSON text, a text that a spreadsheet would take for a
    formula with a leading apostrophe; numbers (negative ones too), booleans and None as they are."""
    if isinstance(value, (dict, list, tuple)):
        value = json.dumps(value, ensure_ascii=False, sort_keys=False)
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _text(value: Any) -> str:
    return "-" if value is None else str(value)


@dataclass(frozen=True)
class Column:
    """One column: the row's `key`, the table's `header`, and how a value reads in the table."""

    key: str
    header: str
    justify: str = "left"
    text: Callable[[Any], str] = _text


def add_format_option(parser: argparse.ArgumentParser, what: str = "the table") -> None:
    """`--format table|csv|json` on a command that prints rows."""
    parser.add_argument(
        "--format",
        default="table",
        choices=FORMATS,
        help=f"how to print {what}: table (default; whole values when piped), csv, or json (a list of rows "
        "with the Python API's keys)",
    )


def make_console(file: IO[str] | None = None) -> Any:
    """A rich console: the terminal's width on a terminal; elsewhere (a pipe, a file) wide enough for any
    row, so nothing is cut or wrapped (rich would assume 80 columns)."""
    from rich.console import Console

    console = Console(file=file)
    if console.is_terminal:
        return console
    return Console(file=file, width=1_000_000, no_color=True, highlight=False, soft_wrap=True)


def rich_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[Column],
    *,
    title: str | None = None,
    section_key: str | None = None,
) -> Any:
    """The rows as a rich `Table`; a line is drawn between runs of equal `section_key` values. Every text is
    shown as it is: no rich markup is read in it, and its control characters are escaped (`printable`), so a
    name from a shared run folder cannot retitle the terminal or forge a line."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=None if title is None else Text(printable(title)))
    for column in columns:
        table.add_column(Text(printable(column.header)), justify=column.justify)  # type: ignore[arg-type]
    previous: object = object()
    for i, row in enumerate(rows):
        if section_key is not None:
            if i and row.get(section_key) != previous:
                table.add_section()
            previous = row.get(section_key)
        table.add_row(*(Text(printable(column.text(row.get(column.key)))) for column in columns))
    return table


#: The fewest characters a column's cells get on a terminal before the rows are printed one field a line.
NARROWEST_CELL = 4


def _too_narrow(width: int, columns: Sequence[Column]) -> bool:
    """Whether a terminal `width` columns wide would squeeze a cell below `NARROWEST_CELL` characters (rich
    then prints empty cells): each cell takes its text, one space either side and a border."""
    return width < 1 + sum(min(len(c.header), NARROWEST_CELL) + 3 for c in columns)


def _print_fields(console: Any, rows: Sequence[Mapping[str, Any]], columns: Sequence[Column], title: str | None) -> None:
    """The rows for a terminal too narrow for the table: one `header: value` line per field, a blank line
    between rows."""
    from rich.text import Text

    lines = [printable(title), ""] if title else []
    for i, row in enumerate(rows):
        if i:
            lines.append("")
        lines += [printable(f"{c.header}: {c.text(row.get(c.key))}") for c in columns]
    console.print(Text("\n".join(lines)), overflow="fold")


def print_rows(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[Column],
    fmt: str = "table",
    *,
    title: str | None = None,
    section_key: str | None = None,
    file: IO[str] | None = None,
) -> None:
    """Print `rows` as a rich table, CSV (a header of the column keys, then one line per row) or JSON (the
    rows as a list of objects, every key of each row)."""
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    out = file if file is not None else sys.stdout
    try:
        if fmt == "json":
            json.dump([dict(row) for row in rows], out, indent=2, ensure_ascii=False)
            out.write("\n")
        elif fmt == "csv":
            fields = [c.key for c in columns]
            writer = csv.writer(out, lineterminator="\n")
            # a carriage return inside a cell: quoted (the writer quotes only the line terminator's "\n")
            quoting = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
            writer.writerow(fields)
            for row in rows:
                cells = [csv_cell(row.get(key)) for key in fields]
                (quoting if any(isinstance(c, str) and "\r" in c for c in cells) else writer).writerow(cells)
        else:
            console = make_console(file)
            if console.is_terminal and _too_narrow(console.width, columns):
                _print_fields(console, rows, columns, title)
            else:
                console.print(rich_table(rows, columns, title=title, section_key=section_key))
        out.flush()
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error of ours
        if out is sys.stdout:  # nothing more can reach it; keep the interpreter's last flush quiet
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
