"""Write the upgrade fixtures: data directories of an older release and what clients see in them.

    .venv/bin/python scripts/make_upgrade_fixtures.py --ref d32902d

1. `git archive <ref>` is unpacked into a temporary directory; every broker below runs from that tree
   (`python -m broker`, its own code), started by this tree's process fixtures (tests/fixtures/broker.py,
   tests/fixtures/cluster.py) with `code_root` pointing there.
2. A single node (the release's single-node mode) and a 3-node KRaft cluster (every node broker and
   controller), both SASL_PLAINTEXT with SCRAM and the ACL authorizer, each get the workload of
   `tests.fixtures.upgrade.write_workload`: topics with records in every codec (keys, null keys, headers,
   fixed timestamps), small segments with offset and time indexes, a compacted topic the cleaner has run
   over (tombstones kept), DeleteRecords, idempotent producer state, committed and aborted transactions
   with transactional offsets, a classic group, a consumer-protocol (KIP-848) group and an empty group
   with committed offsets, dynamic topic / broker / default broker / group configs, SCRAM users, ACLs,
   client quotas; on the cluster also a partition reassignment and topic churn until every controller
   has written a metadata snapshot (the release snapshots every 1,000 metadata records, no knob).
3. `observe` reads everything back through real clients; the nodes are stopped with SIGTERM (their clean
   shutdown) and each node's `logs` directory is packed as a tar.gz.
4. `<out>/manifest.json` holds, per set, the broker settings to reopen it with and the observation.
5. `<out>/release-broker.tar.gz` is the release's `broker` package (`git archive`), from which the tests run
   the release's code in a clone that lacks the commit (a shallow CI checkout).

The output goes to tests/fixtures/upgrade/<short ref>/ (replaced). Records carry fixed timestamps, but
ids (topic ids, producer ids, cluster ids) are new on every run: regenerate and commit all files together.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.fixtures.broker import BrokerProcess  # noqa: E402
from tests.fixtures.cluster import LocalCluster  # noqa: E402
from tests.fixtures.upgrade import (  # noqa: E402
    FIXTURES_ROOT,
    LONG_LIVED,
    SECURITY,
    Target,
    client_settings,
    cluster_security,
    export_release,
    observe,
    pack,
    pack_release_code,
    write_workload,
)

CLUSTER_SIZE = 3
# Where the release keeps the controller quorum's snapshot, under each node's directory.
METADATA_SNAPSHOT = Path("logs", "__cluster_metadata", "snapshot.json")


def single_node(release: Path, work: Path, out: Path) -> dict[str, object]:
    properties = {**LONG_LIVED, **SECURITY}
    node = BrokerProcess(work / "single", properties)
    node.code_root = release
    node.properties["listeners"] = f"SASL_PLAINTEXT://127.0.0.1:{node.port}"
    node.start()
    try:
        target = Target(node.bootstrap, [1], 1)
        write_workload(target)
        observed = observe(target)
        if node.stop() != 0:
            raise RuntimeError(f"the single node did not stop cleanly:\n{node.log_text()}")
    finally:
        node.kill9()
    pack(node.log_dir, out / "single.tar.gz")
    return {"properties": properties, "archives": {"1": "single.tar.gz"}, "observed": observed}


def cluster(release: Path, work: Path, out: Path) -> dict[str, object]:
    properties = {**LONG_LIVED, **cluster_security()}
    nodes = LocalCluster(
        work / "cluster",
        CLUSTER_SIZE,
        properties=properties,
        client_protocol="SASL_PLAINTEXT",
        client_settings=client_settings(),
    )
    for node in nodes.nodes.values():
        node.code_root = release
    try:
        nodes.start()
        nodes.wait_ready()
        target = Target(nodes.bootstrap, sorted(nodes.nodes), CLUSTER_SIZE)

        def every_controller_snapshotted() -> bool:
            return all((n.data_dir / METADATA_SNAPSHOT).exists() for n in nodes.nodes.values())

        write_workload(target, metadata_churn=every_controller_snapshotted)
        observed = observe(target)
    except BaseException:
        print(nodes.log_tails(60), file=sys.stderr)
        raise
    finally:
        nodes.stop()
    archives = {}
    for node_id, node in nodes.nodes.items():
        archives[str(node_id)] = f"cluster-node-{node_id}.tar.gz"
        pack(node.data_dir / "logs", out / archives[str(node_id)])
    return {"properties": properties, "archives": archives, "observed": observed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ref", default="d32902d", help="the release commit (default d32902d)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory and print it")
    arguments = parser.parse_args()
    commit = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "--verify", f"{arguments.ref}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if commit.returncode != 0:
        sys.exit(f"{arguments.ref} is not a commit of this clone")
    full = commit.stdout.strip()
    out = FIXTURES_ROOT / full[:7]
    work = Path(tempfile.mkdtemp(prefix="upgrade-fixtures-"))
    try:
        release = export_release(work / "release", full)
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        manifest = {
            "ref": full,
            "generated_by": "scripts/make_upgrade_fixtures.py",
            "single": single_node(release, work, out),
            "cluster": cluster(release, work, out),
        }
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        pack_release_code(full, out)
        total = sum(path.stat().st_size for path in out.iterdir())
        print(f"wrote {out} ({total / 1e6:.2f} MB)")
    finally:
        if arguments.keep:
            print(f"work directory: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
