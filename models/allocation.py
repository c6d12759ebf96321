"""How cost is split into run / idle / checkpoint_storage / egress / other, and who owns what.

The ``[allocation]``, ``[teams]``, ``[checkpoints]`` and ``[[nodes]]`` sections of ``gpuledger.toml``
are parsed into :class:`AllocationConfig` here; ``sql/allocation/`` reads them as ``alloc.*`` tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.aws import AWS_PROVIDER_NAME
from models.azure import AZURE_PROVIDER_NAME
from models.errors import InputError
from models.gcp import GCP_PROVIDER_NAME
from models.telemetry import DEFAULT_IDLE_THRESHOLD, DEFAULT_PRICING_METRICS

CATEGORIES = ("run", "idle", "checkpoint_storage", "egress", "other")
IDLE_KINDS = ("allocated", "underutilized", "unallocated", "unused_commitment")
"""Why idle money was idle: held and inactive; active below saturation; held by no job; a commitment unused."""
IDLE_POLICIES = ("owner", "share")
PRICING_MODES = ("activity", "active-time")
"""``activity``: run = held GPU-time x measured activity; ``active-time``: run = held time above the idle
threshold (OpenCost-style allocation semantics)."""
UNALLOCATED_TEAM = "unallocated"
METHOD_ID = "gpuledger-split-v2"
"""AllocatedMethodId of every split row (FOCUS 1.3 naming); bump when the method changes."""

# Usage types (FOCUS x_UsageType) that move data out of a resource: internet, cross-region, cross-zone.
# Keyed by ProviderName; AWS usage types, Azure meter names, GCP SKU descriptions (Cloud Storage's "Download").
EGRESS_USAGE_PATTERNS: dict[str, tuple[str, ...]] = {
    AWS_PROVIDER_NAME: ("%DataTransfer-Out-Bytes", "%-AWS-Out-Bytes", "%DataTransfer-xAZ-%", "%CloudFront-Out-Bytes"),
    AZURE_PROVIDER_NAME: ("%Data Transfer Out%", "Inter Availability Zone Data Transfer%"),
    GCP_PROVIDER_NAME: (
        "Network Internet Data Transfer Out%",
        "Network Inter Region Data Transfer Out%",
        "Network Internet Egress%",
        "Network Inter Zone Data Transfer Out%",
        "Download %",
    ),
}


def canonical_resource_id(resource_id: str) -> str:
    """A ResourceId as FOCUS stores it: Azure ARM ids are case-insensitive and stored in lower case."""
    return resource_id.lower() if resource_id.lower().startswith(("/subscriptions/", "/providers/")) else resource_id


@dataclass(frozen=True)
class NodeMapping:
    """A telemetry node and the cloud resource (FOCUS ResourceId) it runs on."""

    cluster: str
    node: str
    resource_id: str
    pool: str | None = None
    """Idle-sharing pool of the node (``idle_policy = "share"``); its cluster when not set."""


@dataclass(frozen=True)
class AllocationConfig:
    idle_threshold: float = DEFAULT_IDLE_THRESHOLD
    """Utilization ratio (0..1) at or below which an allocated GPU counts as idle."""
    idle_policy: str = "owner"
    """``owner``: unallocated idle stays with the resource's team; ``share``: spread over the teams by their
    GPU-hours in the resource's pool (its nodes' configured pool, else their cluster)."""
    pricing: str = "activity"
    """One of PRICING_MODES: how held GPU-time is divided into run and idle."""
    pricing_metrics: tuple[str, ...] = DEFAULT_PRICING_METRICS
    """Activity metrics that may price run time, preferred first; the one used is recorded per row."""
    group_by_name: bool = False
    """Jobs without a scheduler-given run group form run groups by job name (off: each requeue chain is a run)."""
    session_partitions: tuple[str, ...] = ("interactive",)
    """Slurm partitions whose jobs are interactive sessions, not runs."""
    session_qos: tuple[str, ...] = ()
    """Slurm QOS values whose jobs are interactive sessions."""
    session_names: tuple[str, ...] = ("jupyter*", "notebook*")
    """Job-name patterns (``*`` any text) of interactive sessions (notebook pods, ``srun --pty`` shells)."""
    sample_interval_seconds: float = 60.0
    """Seconds one utilization sample stands for (the scrape or query step)."""
    team_tag_keys: tuple[str, ...] = ("team",)
    """FOCUS ``Tags`` keys naming a charge's team, first present wins."""
    account_teams: dict[str, str] = field(default_factory=dict)
    """SubAccountId (AWS account, Azure subscription, GCP project) -> team, for untagged charges."""
    job_account_teams: dict[str, str] = field(default_factory=dict)
    """Scheduler account / Kubernetes namespace -> team; unmapped accounts are team names themselves."""
    checkpoint_resources: tuple[str, ...] = ()
    """ResourceIds (bucket names, volume or snapshot ids) that hold checkpoints."""
    checkpoint_tags: dict[str, str] = field(default_factory=dict)
    """Tag key -> value marking storage that holds checkpoints (e.g. ``purpose = "checkpoints"``)."""
    nodes: tuple[NodeMapping, ...] = ()
    """Telemetry node -> cloud ResourceId, where the telemetry does not carry the instance id itself."""


_SECTION_KEYS = {
    "allocation": {"idle_threshold", "idle_policy", "sample_interval_seconds", "pricing", "pricing_metrics"},
    "runs": {"group_by_name", "session_partitions", "session_qos", "session_names"},
    "teams": {"tag_keys", "accounts", "job_accounts"},
    "checkpoints": {"resources", "tags"},
}


def parse_allocation(path: Path, data: dict[str, Any]) -> AllocationConfig:
    """Validate the allocation sections of a parsed ``gpuledger.toml``; errors name the key."""
    for section, allowed in _SECTION_KEYS.items():
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise InputError(path, f"[{section}] must be a table", column=section)
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise InputError(path, f"[{section}]: unknown key(s) {unknown}", column=f"{section}.{unknown[0]}")
    allocation, runs, teams, checkpoints = (data.get(s, {}) for s in _SECTION_KEYS)
    threshold = _number(path, allocation, "idle_threshold", DEFAULT_IDLE_THRESHOLD, lambda v: 0 <= v < 1, "[0, 1)")
    policy = allocation.get("idle_policy", "owner")
    if policy not in IDLE_POLICIES:
        message = f"idle_policy must be one of {', '.join(IDLE_POLICIES)}"
        raise InputError(path, message, column="allocation.idle_policy")
    interval = _number(path, allocation, "sample_interval_seconds", 60, lambda v: 0 < v <= 3600, "(0, 3600]")
    pricing = allocation.get("pricing", "activity")
    if pricing not in PRICING_MODES:
        raise InputError(path, f"pricing must be one of {', '.join(PRICING_MODES)}", column="allocation.pricing")
    group_by_name = runs.get("group_by_name", False)
    if not isinstance(group_by_name, bool):
        raise InputError(path, "[runs] group_by_name must be true or false", column="runs.group_by_name")
    return AllocationConfig(
        idle_threshold=float(threshold),
        idle_policy=policy,
        sample_interval_seconds=float(interval),
        pricing=pricing,
        pricing_metrics=_strings(path, allocation, "pricing_metrics", "allocation", default=DEFAULT_PRICING_METRICS),
        group_by_name=group_by_name,
        session_partitions=_strings(path, runs, "session_partitions", "runs", default=("interactive",)),
        session_qos=_strings(path, runs, "session_qos", "runs", default=()),
        session_names=_strings(path, runs, "session_names", "runs", default=("jupyter*", "notebook*")),
        team_tag_keys=_strings(path, teams, "tag_keys", "teams", default=("team",)),
        account_teams=_string_map(path, teams, "accounts", "teams"),
        job_account_teams=_string_map(path, teams, "job_accounts", "teams"),
        checkpoint_resources=_strings(path, checkpoints, "resources", "checkpoints", default=()),
        checkpoint_tags=_string_map(path, checkpoints, "tags", "checkpoints"),
        nodes=_nodes(path, data.get("nodes", [])),
    )


def _number(
    path: Path, table: dict[str, Any], key: str, default: float, valid: Callable[[float], bool], bounds: str
) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not valid(value):
        raise InputError(path, f"{key} must be a number in {bounds}", column=f"allocation.{key}")
    return float(value)


def _strings(path: Path, table: dict[str, Any], key: str, section: str, *, default: tuple[str, ...]) -> tuple[str, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InputError(path, f"[{section}] {key} must be a list of non-empty strings", column=f"{section}.{key}")
    return tuple(value)


def _string_map(path: Path, table: dict[str, Any], key: str, section: str) -> dict[str, str]:
    value = table.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) and v for v in value.values()):
        raise InputError(path, f"[{section}.{key}] must map names to non-empty strings", column=f"{section}.{key}")
    if UNALLOCATED_TEAM in value.values() and key != "tags":
        raise InputError(path, f"[{section}.{key}]: {UNALLOCATED_TEAM!r} is reserved", column=f"{section}.{key}")
    return dict(value)


def _nodes(path: Path, entries: Any) -> tuple[NodeMapping, ...]:
    if not isinstance(entries, list):
        raise InputError(path, "[[nodes]] must be an array of tables", column="nodes")
    nodes = []
    for index, entry in enumerate(entries, start=1):
        keys = ("cluster", "node", "resource_id")
        valid = (
            isinstance(entry, dict)
            and set(keys) <= set(entry) <= {*keys, "pool"}
            and all(isinstance(v, str) and v for v in entry.values())
        )
        if not valid:
            message = f"[[nodes]] #{index} needs string keys {', '.join(keys)} (and optionally pool)"
            raise InputError(path, message, column="nodes")
        resource_id = canonical_resource_id(entry["resource_id"])
        nodes.append(NodeMapping(entry["cluster"], entry["node"], resource_id, entry.get("pool")))
    if len({(n.cluster, n.node) for n in nodes}) != len(nodes):
        raise InputError(path, "[[nodes]] lists a (cluster, node) twice", column="nodes")
    return tuple(nodes)
