"""The `streamhub` CLI without a server: reading file sets, rendering plans, exit codes, help and completion.
Its commands against a real server are in tests/integration/declarative/test_cli.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.streamhub.documents import DocumentError, read_documents
from cli.streamhub.main import EXIT_CHANGES, EXIT_OK, EXIT_REFUSED, cli, plan_exit_code
from cli.streamhub.render import render_plan, table


def _plan(**counts: int) -> dict:
    return {
        "file_set": "kafka",
        "counts": {"create": 0, "update": 0, "delete": 0, "unchanged": 0, "refused": 0, **counts},
        "changes": [],
        "undeclared": [],
    }


def test_it_reads_every_yaml_document_of_a_folder_in_order(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text("kind: Topic\nmetadata: {name: b}\nspec: {partitions: 1}\n")
    (tmp_path / "a.yml").write_text(
        "---\nkind: Topic\nmetadata: {name: a1}\nspec: {}\n---\nkind: Quota\nmetadata: {name: q}\nspec: {}\n---\n"
    )
    (tmp_path / "notes.txt").write_text("not a document")
    assert [d["metadata"]["name"] for d in read_documents((str(tmp_path),))] == ["a1", "q", "b"]


@pytest.mark.parametrize(
    ("content", "message"),
    [("kind: [unclosed", "not valid YAML"), ("- just\n- a list\n", "is not a mapping")],
)
def test_it_names_the_file_of_a_bad_document(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    with pytest.raises(DocumentError, match=message) as raised:
        read_documents((str(bad),))
    assert str(bad) in str(raised.value)


def _channel(url: str) -> str:
    return f"kind: AlertChannel\nmetadata: {{name: oncall}}\nspec: {{type: webhook, url: '{url}'}}\n"


def test_a_channel_url_is_read_from_the_environment_or_a_file_never_from_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ONCALL_URL", "https://hooks.example.com/from-env")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "oncall").write_text("https://hooks.example.com/from-file\n")
    (tmp_path / "env.yaml").write_text(_channel("${ONCALL_URL}"))
    (tmp_path / "file.yaml").write_text(_channel("${file:secrets/oncall}"))
    assert [d["spec"]["url"] for d in read_documents((str(tmp_path),))] == [
        "https://hooks.example.com/from-env",
        "https://hooks.example.com/from-file",
    ]
    written = tmp_path / "written.yaml"
    written.write_text(_channel("https://hooks.example.com/in-git"))
    with pytest.raises(DocumentError, match=r"spec.url is a credential: write \$\{ENV_VAR\}"):
        read_documents((str(written),))
    written.write_text(_channel("${UNSET_ONCALL_URL}"))
    monkeypatch.delenv("UNSET_ONCALL_URL", raising=False)
    with pytest.raises(DocumentError, match="UNSET_ONCALL_URL is not set"):
        read_documents((str(written),))


def test_exit_codes_tell_ci_what_a_plan_holds() -> None:
    assert plan_exit_code(_plan(unchanged=3)) == EXIT_OK == 0
    assert plan_exit_code(_plan(create=1, unchanged=3)) == EXIT_CHANGES == 2
    assert plan_exit_code(_plan(delete=1)) == EXIT_CHANGES
    assert plan_exit_code(_plan(create=1, refused=1)) == EXIT_REFUSED == 3


def test_a_plan_reads_as_one_line_per_changed_field_with_drift_and_refusals() -> None:
    plan = _plan(update=1, refused=1, unchanged=2)
    plan["changes"] = [
        {
            "kind": "Topic",
            "name": "pay.orders",
            "team": "payments",
            "cluster": "dev",
            "action": "update",
            "diff": {"configs.retention.ms": {"from": "1000", "to": "3600000"}},
            "drift": {"configs.retention.ms": {"recorded": "3600000", "on_cluster": "1000"}},
        },
        {
            "kind": "Topic",
            "name": "pay.forever",
            "team": "payments",
            "cluster": "dev",
            "action": "refused",
            "diff": {},
            "drift": {},
            "refusal": {
                "code": "policy_violation",
                "message": "retention.ms -1 is not allowed.",
                "details": {"hint": "Use 30 days or less."},
            },
        },
    ]
    assert render_plan(plan).splitlines() == [
        "~ Topic pay.orders (team payments, cluster dev)",
        '    configs.retention.ms: "1000" -> "3600000"',
        '    drift: configs.retention.ms is "1000" on the cluster, "3600000" as last applied',
        "! Topic pay.forever (team payments, cluster dev)",
        "    refused (policy_violation): retention.ms -1 is not allowed.",
        "    hint: Use 30 days or less.",
        "",
        "Plan for file set kafka: 0 to create, 1 to update, 0 to delete, 1 refused, 2 unchanged.",
    ]
    assert render_plan(_plan(unchanged=4)) == "No changes: the server matches file set kafka (4 resources)."


def test_tables_align_columns_and_show_nested_values_compactly() -> None:
    text = table(
        [{"id": 1, "name": "a", "values": {"x": 1.0}}, {"id": 22, "name": "bbb", "values": {}}],
        ["id", "name", "values"],
    )
    assert text.splitlines() == ["ID  NAME  VALUES", '1   a     {"x":1.0}', "22  bbb   {}"]


def test_every_command_has_help_and_completion_scripts_are_printed() -> None:
    runner = CliRunner()
    top = runner.invoke(cli, ["--help"])
    assert top.exit_code == 0
    commands = [
        "login",
        "logout",
        "get",
        "describe",
        "plan",
        "diff",
        "apply",
        "export",
        "schema",
        "completion",
        "topics",
    ]
    for command in commands:
        assert command in top.output
        shown = runner.invoke(cli, [command, "--help"])
        assert shown.exit_code == 0, shown.output
        assert shown.output.startswith(f"Usage: cli {command}") or shown.output.startswith("Usage: ")
    for sub in ("produce", "consume"):
        assert runner.invoke(cli, ["topics", sub, "--help"]).exit_code == 0
    bash = runner.invoke(cli, ["completion", "bash"])
    assert "_STREAMHUB_COMPLETE" in bash.output


def test_it_says_how_to_log_in_when_it_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMHUB_CONFIG", str(tmp_path / "none.json"))
    monkeypatch.delenv("STREAMHUB_URL", raising=False)
    monkeypatch.delenv("STREAMHUB_API_KEY", raising=False)
    result = CliRunner().invoke(cli, ["get", "topics"])
    assert result.exit_code == 1
    assert "Not logged in" in result.output
    assert "streamhub login" in result.output
