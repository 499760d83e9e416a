"""The `streamhub` command: resources as code (plan, apply, diff, export), get and describe, quick produce and
consume. Exit codes are made for CI: 0 nothing to do or done, 2 changes pending (plan, diff), 3 refused
(a policy, a guardrail or a permission), 1 failed (or an error of the tool or the API); `login` with single
sign-on adds 4 (refused at the identity provider) and 5 (the code expired before it was approved)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click
import yaml

from . import __version__, oidc, settings
from .api import Api, ApiError, SessionExpired
from .documents import DocumentError, dump_documents, read_documents
from .render import render_plan, render_report, table

EXIT_OK, EXIT_FAILED, EXIT_CHANGES, EXIT_REFUSED = 0, 1, 2, 3
EXIT_LOGIN_DENIED, EXIT_LOGIN_EXPIRED = 4, 5

# Resource names for get/describe: the API path and the columns of the table.
RESOURCES: dict[str, tuple[str, list[str]]] = {
    "topics": ("topics", ["id", "name", "cluster", "team", "partitions", "replication_factor", "managed"]),
    "service-accounts": ("service-accounts", ["id", "name", "team", "principal", "description"]),
    "access-grants": ("access-grants", ["id", "cluster", "service_account", "template", "topic_prefix"]),
    "acls": (
        "acls",
        [
            "id",
            "cluster",
            "principal",
            "operation",
            "resource_type",
            "resource_name",
            "pattern_type",
            "permission",
        ],
    ),
    "quotas": ("quotas", ["id", "cluster", "entity_key", "values", "managed"]),
    "clusters": ("clusters", ["id", "name", "engine", "status"]),
    "teams": ("teams", ["id", "name", "slug"]),
    "consumer-groups": ("consumer-groups", ["id", "name", "cluster", "team", "state", "total_lag"]),
    "alert-rules": ("alert-rules", ["id", "name", "team", "metric", "threshold", "enabled"]),
    "alert-channels": ("alert-channels", ["id", "name", "team", "kind", "enabled"]),
    "streaming-jobs": ("streaming-jobs", ["id", "name", "team", "state"]),
    "change-sets": ("change-sets", ["id", "file_set", "state", "actor_name", "created_at"]),
    "managed-resources": (
        "managed-resources",
        ["kind", "name", "team_slug", "cluster_name", "file_set", "change_set"],
    ),
    "operations": ("operations", ["id", "kind", "state", "resource_name", "created_at"]),
}
ALIASES = {name.rstrip("s"): name for name in RESOURCES} | {"sa": "service-accounts", "cg": "consumer-groups"}
OUTPUTS = click.Choice(["table", "json", "yaml"])


class Context:
    def __init__(self) -> None:
        self._api: Api | None = None

    @property
    def api(self) -> Api:
        if self._api is None:
            login = settings.load()
            if login is None:
                fail(
                    "Not logged in.",
                    hint="Run `streamhub login --url https://… ` (or set STREAMHUB_URL and STREAMHUB_API_KEY).",
                )
            self._api = Api(login, on_renewed=settings.save)
        return self._api


def fail(message: str, *, hint: str | None = None, code: int = EXIT_FAILED) -> NoReturn:
    click.secho(f"error: {message}", fg="red", err=True)
    if hint:
        click.echo(f"hint: {hint}", err=True)
    sys.exit(code)


def api_failure(error: ApiError) -> NoReturn:
    """The API's reason, its hint and the request id to quote; refusals (403, policy) exit 3."""
    click.secho(f"error: {error.message} ({error.code})", fg="red", err=True)
    problems = error.details.get("problems") if isinstance(error.details, dict) else None
    for problem in problems or []:
        click.echo(
            f"  document {problem.get('document')} at '{problem.get('path')}': {problem.get('message')}",
            err=True,
        )
    if error.code == "invalid" and isinstance(error.details, dict):  # a request's field errors, by field
        for field, messages in error.details.items():
            click.echo(
                f"  {field}: {' '.join(map(str, messages if isinstance(messages, list) else [messages]))}",
                err=True,
            )
    if error.hint:
        click.echo(f"hint: {error.hint}", err=True)
    if error.request_id:
        click.echo(f"request id: {error.request_id}", err=True)
    refused = error.status == 403 or error.code in ("policy_violation", "plan_refused", "outside_team_scope")
    sys.exit(EXIT_REFUSED if refused else EXIT_FAILED)


def emit(data: Any, output: str, columns: list[str] | None = None) -> None:
    if output == "json":
        click.echo(json.dumps(data, indent=2, default=str))
    elif output == "yaml":
        click.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), nl=False)
    else:
        rows = data if isinstance(data, list) else [data]
        click.echo(table(rows, columns))


class StreamhubGroup(click.Group):
    """Turns the API's errors into one clear message wherever a command meets them."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ApiError as error:
            api_failure(error)
        except DocumentError as error:
            fail(str(error))
        except SessionExpired as error:
            fail(str(error), hint="Run `streamhub login` again.")
        except oidc.OidcLoginError as error:
            code = {"access_denied": EXIT_LOGIN_DENIED, "expired_token": EXIT_LOGIN_EXPIRED}.get(error.reason)
            hint = {
                "access_denied": "Run `streamhub login` again and approve the request, or use an API key.",
                "expired_token": "Run `streamhub login` again and approve within the time shown.",
            }.get(error.reason)
            fail(str(error), hint=hint, code=code or EXIT_FAILED)


@click.group(
    cls=StreamhubGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(__version__, prog_name="streamhub")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Manage StreamHub from the command line and from CI.

    Keep a team's topics, access grants, quotas and service accounts as YAML documents in Git, review what
    applying them changes (`plan`), and apply them (`apply`). Exit codes: 0 nothing to change (or applied),
    2 changes pending, 3 refused by a policy, guardrail or permission, 1 failed.

    Log in once with `streamhub login` (single sign-on where the server offers it, else an API key), or set
    STREAMHUB_URL and STREAMHUB_API_KEY (CI).
    """
    ctx.obj = Context()


# --- login ---------------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--url",
    required=True,
    envvar="STREAMHUB_URL",
    help="The console's address, e.g. https://kafka.example.com.",
)
@click.option(
    "--api-key",
    envvar="STREAMHUB_API_KEY",
    help="An API key (team or service account). Asked for when the server offers no single sign-on, so it "
    "stays out of shell history.",
)
@click.option(
    "--oidc",
    "use_oidc",
    is_flag=True,
    help="Sign in with the identity provider (device code); fail if the server does not offer it.",
)
def login(url: str, api_key: str | None, use_oidc: bool) -> None:
    """Sign in to a StreamHub server and keep the login for the next commands.

    Without --api-key, when the server offers single sign-on for the CLI, you approve a code in any browser
    (the OAuth device flow) and the CLI keeps your identity provider's tokens: commands then act as you,
    with your teams and roles, and the access token is renewed with the refresh token when it expires.
    Otherwise the API key is asked for (checked before it is kept).

    \b
    Examples:
      streamhub login --url https://kafka.example.com          # single sign-on where offered
      streamhub login --url https://kafka.example.com --oidc   # single sign-on or nothing

    The login is written to ~/.config/streamhub/config.json, readable by you only (STREAMHUB_CONFIG moves
    it); `streamhub logout` forgets it. In CI, set STREAMHUB_URL and STREAMHUB_API_KEY instead.

    Exit code: 0 logged in, 4 refused at the identity provider, 5 the code expired, 1 failed.
    """
    url = url.rstrip("/")
    if api_key and use_oidc:
        fail("Pass --api-key or --oidc, not both.", hint="STREAMHUB_API_KEY counts as --api-key.")
    if not api_key:
        offered = oidc.offer(url)
        if offered is not None:
            login_with_oidc(url, offered)
            return
        if use_oidc:
            fail(
                f"{url} offers no single sign-on for the CLI.",
                hint="Its operator sets OIDC_CLI_CLIENT_ID and OIDC_API_AUDIENCE to offer it; or log in "
                "with an API key.",
            )
        api_key = click.prompt("API key", hide_input=True)
    candidate = settings.Login(url=url, api_key=api_key)
    teams = Api(candidate).list_all("teams")
    path = settings.save(candidate)
    click.echo(f"Logged in to {candidate.url}; {len(teams)} team(s) visible. Saved in {path}.")


def login_with_oidc(url: str, offered: oidc.Offer) -> None:
    endpoints = oidc.discover(offered.issuer)
    authorization = oidc.start(offered, endpoints)
    if authorization.verification_uri_complete:
        click.echo(f"To sign in, open {authorization.verification_uri_complete}", err=True)
        click.echo(f"and check that it shows the code {authorization.user_code}.", err=True)
    else:
        click.echo(f"To sign in, open {authorization.verification_uri}", err=True)
        click.echo(f"and enter the code {authorization.user_code}.", err=True)
    minutes = max(1, authorization.expires_in // 60)
    click.echo(f"Waiting for your approval (the code expires in {minutes} min)…", err=True)
    tokens = oidc.poll(offered, endpoints, authorization)
    session = settings.OidcSession(
        issuer=offered.issuer,
        client_id=offered.client_id,
        audience=offered.audience,
        token_endpoint=endpoints.token,
        revocation_endpoint=endpoints.revocation,
        tokens=tokens,
    )
    api = Api(settings.Login(url=url, oidc=session))
    try:
        username = api.get("auth/profile/")["user"]["username"]
        teams = api.list_all("teams")
    except SessionExpired as error:  # nothing is kept: the server does not take these tokens
        fail(str(error), hint=f"Sign in to the console at {url} once, then run `streamhub login` again.")
    path = settings.save(api.login)  # with the tokens a renewal on the way may have brought
    click.echo(
        f"Logged in to {url} as {username} (single sign-on); {len(teams)} team(s) visible. Saved in {path}."
    )


@cli.command()
def logout() -> None:
    """Forget the stored login; a single sign-on session's refresh token is revoked at the provider too
    (when it answers). STREAMHUB_API_KEY in the environment, if set, still applies."""
    path, previous = settings.forget()
    if previous is None:
        click.echo("Not logged in; nothing to forget.")
        return
    revoked = ""
    session = previous.oidc
    if session and session.revocation_endpoint and session.tokens.refresh_token:
        if oidc.revoke(session.revocation_endpoint, session.client_id, session.tokens.refresh_token):
            revoked = " The identity provider revoked its refresh token."
        else:
            revoked = " The identity provider could not be told; its refresh token expires on its own."
    click.echo(f"Logged out of {previous.url} ({path} deleted).{revoked}")


# --- reading -------------------------------------------------------------------------------------


def resource_of(name: str) -> tuple[str, list[str]]:
    resource = ALIASES.get(name, name)
    if resource not in RESOURCES:
        fail(f"Unknown resource {name!r}.", hint=f"One of: {', '.join(RESOURCES)}.")
    return RESOURCES[resource]


def complete_resource(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [name for name in RESOURCES if name.startswith(incomplete)]


@cli.command()
@click.argument("resource", shell_complete=complete_resource)
@click.option("-o", "--output", type=OUTPUTS, default="table", show_default=True)
@click.option("--cluster", help="Only this cluster's (name or id).")
@click.option("--team", help="Only this team's (id).")
@click.pass_obj
def get(obj: Context, resource: str, output: str, cluster: str | None, team: str | None) -> None:
    """List resources: topics, service-accounts, access-grants, acls, quotas, clusters, teams, consumer-groups,
    alert-rules, alert-channels, streaming-jobs, change-sets, managed-resources, operations."""
    path, columns = resource_of(resource)
    filters = {"cluster": cluster_id(obj.api, cluster) if cluster else None, "team": team}
    emit(obj.api.list_all(path, **filters), output, columns)


@cli.command()
@click.argument("resource", shell_complete=complete_resource)
@click.argument("name_or_id")
@click.option("-o", "--output", type=OUTPUTS, default="yaml", show_default=True)
@click.option("--cluster", help="The cluster (name or id), when names repeat across clusters.")
@click.pass_obj
def describe(obj: Context, resource: str, name_or_id: str, output: str, cluster: str | None) -> None:
    """Show one resource in full, by id or by name."""
    path, columns = resource_of(resource)
    if not name_or_id.isdigit():
        filters = {"cluster": cluster_id(obj.api, cluster) if cluster else None}
        matches = [row for row in obj.api.list_all(path, **filters) if row.get("name") == name_or_id]
        if not matches:
            fail(f"No {resource} named {name_or_id!r}.")
        if len(matches) > 1:
            fail(f"{len(matches)} {resource} are named {name_or_id!r}.", hint="Pass --cluster, or the id.")
        name_or_id = str(matches[0]["id"])
    emit(obj.api.get(f"{path}/{name_or_id}/"), output, columns)


def cluster_id(api: Api, cluster: str) -> int:
    if cluster.isdigit():
        return int(cluster)
    for row in api.list_all("clusters"):
        if row["name"] == cluster:
            return int(row["id"])
    fail(f"No cluster named {cluster!r}.", hint="`streamhub get clusters` lists them.")


# --- resources as code ---------------------------------------------------------------------------


def file_set_options(command: Any) -> Any:
    options = [
        click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True)),
        click.option(
            "--file-set",
            envvar="STREAMHUB_FILE_SET",
            help="The name that owns what these files apply (default: the first path's folder name). Keep it "
            "stable: prune deletes only what this name applied.",
        ),
        click.option(
            "--prune",
            is_flag=True,
            help="Delete resources this file set applied that no file declares any more.",
        ),
        click.option(
            "--team", help="Place every document in this team (slug), e.g. an export applied elsewhere."
        ),
        click.option("--cluster", help="Place every document on this cluster (name)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def request_body(
    paths: tuple[str, ...], file_set: str | None, prune: bool, team: str | None, cluster: str | None
) -> dict:
    first = Path(paths[0]).resolve()
    body: dict[str, Any] = {
        "documents": read_documents(paths),
        "file_set": file_set or (first.name if first.is_dir() else first.parent.name),
        "prune": prune,
    }
    if team:
        body["team"] = team
    if cluster:
        body["cluster"] = cluster
    return body


def plan_exit_code(plan: dict) -> int:
    counts = plan["counts"]
    if counts.get("refused"):
        return EXIT_REFUSED
    return EXIT_CHANGES if any(counts.get(a) for a in ("create", "update", "delete")) else EXIT_OK


@cli.command()
@file_set_options
@click.option(
    "-o", "--output", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True
)
@click.pass_obj
def plan(
    obj: Context,
    paths: tuple[str, ...],
    file_set: str | None,
    prune: bool,
    team: str | None,
    cluster: str | None,
    output: str,
) -> None:
    """Show what applying the files would change: create, update (with each field's old and new value),
    delete (with --prune), and what is refused, with the reason. Drift made by hand on a cluster shows as
    an update back to the files' state.

    Exit code: 0 no changes, 2 changes pending, 3 something refused, 1 failed.
    """
    result = obj.api.post("declarative/plan/", request_body(paths, file_set, prune, team, cluster))
    if output == "text":
        click.echo(render_plan(result, color=sys.stdout.isatty()))
    else:
        emit(result, output)
    sys.exit(plan_exit_code(result))


@cli.command()
@file_set_options
@click.pass_obj
def diff(
    obj: Context,
    paths: tuple[str, ...],
    file_set: str | None,
    prune: bool,
    team: str | None,
    cluster: str | None,
) -> None:
    """Only what differs between the files and the server, one line per field (no summary).

    Exit code: 0 no differences, 2 differences, 3 something refused, 1 failed.
    """
    result = obj.api.post("declarative/plan/", request_body(paths, file_set, prune, team, cluster))
    for change in result["changes"]:
        where = f"{change['kind']}/{change['name']}"
        if change["action"] == "refused":
            click.echo(f"! {where}: {change['refusal']['message']}")
        for field, values in change["diff"].items():
            click.echo(
                f"{ {'create': '+', 'delete': '-'}.get(change['action'], '~') } {where} {field}: "
                f"{json.dumps(values['from'])} -> {json.dumps(values['to'])}"
            )
    sys.exit(plan_exit_code(result))


@cli.command()
@file_set_options
@click.option("-y", "--yes", is_flag=True, help="Apply without asking (CI).")
@click.option(
    "-o", "--output", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True
)
@click.pass_obj
def apply(
    obj: Context,
    paths: tuple[str, ...],
    file_set: str | None,
    prune: bool,
    team: str | None,
    cluster: str | None,
    yes: bool,
    output: str,
) -> None:
    """Plan, show the plan, and apply exactly that plan as one audited change set.

    Changes run in dependency order through the same checks as the API. If the plan changed between the
    two steps, nothing is applied. The report says, per change, applied, pending (the cluster is still
    confirming it), unknown, failed or skipped; the first failure stops the rest. Applying twice changes
    nothing.

    Exit code: 0 applied (or nothing to change), 3 refused, 1 failed or partly applied.
    """
    body = request_body(paths, file_set, prune, team, cluster)
    planned = obj.api.post("declarative/plan/", body)
    if output == "text":
        click.echo(render_plan(planned, color=sys.stdout.isatty()))
    code = plan_exit_code(planned)
    if code != EXIT_CHANGES:
        if output != "text":
            emit({"plan": planned, "change_set": None}, output)
        sys.exit(code)
    if not yes:
        if not sys.stdin.isatty():
            fail("Not applying without confirmation.", hint="Pass --yes to apply from a script or CI.")
        click.confirm("Apply these changes?", abort=True)
    pending = sum(planned["counts"].get(a, 0) for a in ("create", "update", "delete"))
    click.echo(f"Applying {pending} change(s)…", err=True)
    result = obj.api.post("declarative/apply/", {**body, "plan_id": planned["plan_id"]})
    change_set = result["change_set"]
    if output == "text":
        click.echo(render_report(change_set, color=sys.stdout.isatty()))
    else:
        emit(result, output)
    sys.exit(EXIT_OK if change_set is None or change_set["state"] == "applied" else EXIT_FAILED)


@cli.command()
@click.option("--team", required=True, help="The team's slug.")
@click.option("--cluster", required=True, help="The cluster (name or id).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=True, writable=True),
    help="A file, or a folder (one file per kind). Default: standard output.",
)
@click.pass_obj
def export(obj: Context, team: str, cluster: str, output: str | None) -> None:
    """Write a team's resources on a cluster as documents, to start a file set from today's state."""
    documents = obj.api.get("declarative/export/", team=team, cluster=cluster_id(obj.api, cluster))[
        "documents"
    ]
    if output is None:
        click.echo(dump_documents(documents), nl=False)
        return
    target = Path(output)
    if target.is_dir() or output.endswith(os.sep):
        target.mkdir(parents=True, exist_ok=True)
        by_kind: dict[str, list[dict]] = {}
        for document in documents:
            by_kind.setdefault(document["kind"], []).append(document)
        for kind, group in by_kind.items():
            (target / f"{kind.lower()}s.yaml").write_text(dump_documents(group))
    else:
        target.write_text(dump_documents(documents))
    click.echo(f"Wrote {len(documents)} document(s) to {target}.", err=True)


@cli.command(name="schema")
@click.pass_obj
def json_schema(obj: Context) -> None:
    """Print the documents' JSON Schema (for editors: yaml-language-server, IntelliJ)."""
    click.echo(json.dumps(obj.api.get("declarative/schema/"), indent=2))


# --- quick checks on a topic ---------------------------------------------------------------------


@cli.group()
def topics() -> None:
    """Quick checks on a topic through the REST API: produce a message, read the latest ones."""


def topic_id(api: Api, name: str, cluster: str) -> int:
    rows = [
        row
        for row in api.list_all("topics", cluster=cluster_id(api, cluster), name=name)
        if row["name"] == name
    ]
    if not rows:
        fail(f"No topic named {name!r} on {cluster}.", hint="`streamhub get topics --cluster …` lists them.")
    return int(rows[0]["id"])


@topics.command()
@click.argument("topic")
@click.argument("value", required=False)
@click.option("--cluster", required=True, help="The cluster (name or id).")
@click.option("--key", help="The message key.")
@click.option("--header", "headers", multiple=True, metavar="NAME=VALUE", help="A header; repeat for more.")
@click.option("--partition", type=int, help="Write to this partition (default: by key).")
@click.pass_obj
def produce(
    obj: Context,
    topic: str,
    value: str | None,
    cluster: str,
    key: str | None,
    headers: tuple[str, ...],
    partition: int | None,
) -> None:
    """Produce one message: VALUE, or standard input when VALUE is '-' or missing."""
    if value in (None, "-"):
        value = sys.stdin.read()
    parsed = {}
    for header in headers:
        name, sep, text = header.partition("=")
        if not sep:
            fail(f"Header {header!r} is not NAME=VALUE.")
        parsed[name] = text
    body = {"key": key, "value": value, "headers": parsed}
    if partition is not None:
        body["partition"] = partition
    produced = obj.api.post(f"topics/{topic_id(obj.api, topic, cluster)}/produce/", body)
    click.echo(f"Produced to {topic} partition {produced['partition']} at offset {produced['offset']}.")


@topics.command()
@click.argument("topic")
@click.option("--cluster", required=True, help="The cluster (name or id).")
@click.option(
    "--from", "start", type=click.Choice(["newest", "earliest"]), default="newest", show_default=True
)
@click.option("-n", "--limit", type=click.IntRange(1, 500), default=20, show_default=True)
@click.option("-o", "--output", type=OUTPUTS, default="table", show_default=True)
@click.pass_obj
def consume(obj: Context, topic: str, cluster: str, start: str, limit: int, output: str) -> None:
    """Read messages (the newest, or from the start) without joining a consumer group."""
    result = obj.api.get(f"topics/{topic_id(obj.api, topic, cluster)}/messages/", start=start, limit=limit)
    messages = [
        {
            "partition": m["partition"],
            "offset": m["offset"],
            "timestamp": m["timestamp"],
            "key": (m["key"] or {}).get("data"),
            "value": (m["value"] or {}).get("data"),
        }
        for m in result["messages"]
    ]
    emit(messages, output, ["partition", "offset", "timestamp", "key", "value"])


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script, e.g. `eval "$(streamhub completion bash)"` in ~/.bashrc."""
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    click.echo(completer(cli, {}, "streamhub", "_STREAMHUB_COMPLETE").source())
