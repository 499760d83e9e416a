"""Plans, reports and lists as text for people: aligned tables, one line per changed field."""

from __future__ import annotations

import json
from typing import Any

import click

SIGNS = {"create": ("+", "green"), "update": ("~", "yellow"), "delete": ("-", "red"), "refused": ("!", "red")}
STATUS_COLORS = {
    "applied": "green",
    "pending": "yellow",
    "unknown": "yellow",
    "partial": "red",
    "failed": "red",
}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def table(rows: list[dict[str, Any]], columns: list[str] | None = None) -> str:
    if not rows:
        return "(none)"
    columns = columns or [key for key, value in rows[0].items() if not isinstance(value, dict | list)][:7]
    cells = [[_cell(row.get(column)) for column in columns] for row in rows]
    widths = [max(len(column), *(len(line[i]) for line in cells)) for i, column in enumerate(columns)]
    lines = [
        "  ".join(column.upper().ljust(width) for column, width in zip(columns, widths, strict=True)).rstrip()
    ]
    lines += [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in cells
    ]
    return "\n".join(lines)


def _value(value: Any) -> str:
    return "(none)" if value is None else json.dumps(value)


def _where(change: dict[str, Any]) -> str:
    place = f"team {change['team']}" + (f", cluster {change['cluster']}" if change.get("cluster") else "")
    return f"{change['kind']} {change['name']} ({place})"


def render_plan(plan: dict[str, Any], *, color: bool = False) -> str:
    def styled(text: str, fg: str) -> str:
        return click.style(text, fg=fg) if color else text

    lines: list[str] = []
    for change in plan["changes"]:
        if change["action"] == "unchanged":
            continue
        sign, fg = SIGNS[change["action"]]
        lines.append(styled(f"{sign} {_where(change)}", fg))
        if change["action"] == "refused":
            refusal = change["refusal"]
            lines.append(f"    refused ({refusal['code']}): {refusal['message']}")
            hint = (refusal.get("details") or {}).get("hint")
            if hint:
                lines.append(f"    hint: {hint}")
            continue
        for field, values in change["diff"].items():
            lines.append(f"    {field}: {_value(values['from'])} -> {_value(values['to'])}")
        for field, values in change.get("drift", {}).items():
            lines.append(
                styled(
                    f"    drift: {field} is {_value(values['on_cluster'])} on the cluster, "
                    f"{_value(values['recorded'])} as last applied",
                    "magenta",
                )
            )
    for left in plan.get("undeclared", []):
        lines.append(
            f"  {left['kind']} {left['name']} is no longer declared; kept (apply with --prune to delete it)"
        )
    counts = plan["counts"]
    summary = (
        f"Plan for file set {plan['file_set']}: {counts['create']} to create, {counts['update']} to update, "
        f"{counts['delete']} to delete, {counts['refused']} refused, {counts['unchanged']} unchanged."
    )
    if not any(counts[a] for a in ("create", "update", "delete", "refused")):
        summary = (
            f"No changes: the server matches file set {plan['file_set']} ({counts['unchanged']} resources)."
        )
    return "\n".join([*lines, "", summary]) if lines else summary


def render_report(change_set: dict[str, Any] | None, *, color: bool = False) -> str:
    if change_set is None:
        return "Nothing to apply."
    lines = []
    for change in change_set["report"]["changes"]:
        status = change["status"]
        text = f"{status:8} {change['action']:7} {change['kind']} {change['name']}"
        lines.append(click.style(text, fg=STATUS_COLORS.get(status)) if color else text)
        if change.get("reason"):
            lines.append(f"         {change['reason'].get('message')} ({change['reason'].get('code')})")
        if change.get("done") and status != "applied":
            lines.append(f"         done before it stopped: {', '.join(change['done'])}")
    counts = {k: v for k, v in change_set["report"]["counts"].items() if v}
    lines.append(
        f"Change set {change_set['id']} ({change_set['state']}): "
        + ", ".join(f"{count} {status}" for status, count in counts.items())
        + "."
    )
    return "\n".join(lines)
