"""GPU catalog: every instance type resolves to a known model, counts match the clouds' published specs."""

from __future__ import annotations

import dataclasses

import pytest

from models.gpu_catalog import (
    GPU_INSTANCE_TYPES,
    GPU_MODELS,
    GpuInstanceType,
    catalog_rows,
    gpu_instance,
)


def test_every_instance_type_names_a_known_model() -> None:
    unknown = {key: t.gpu_model for key, t in GPU_INSTANCE_TYPES.items() if t.gpu_model not in GPU_MODELS}
    assert unknown == {}


def test_keys_match_entries_and_counts_are_positive() -> None:
    for (provider, instance_type), t in GPU_INSTANCE_TYPES.items():
        assert (t.provider, t.instance_type) == (provider, instance_type)
        assert provider in {"AWS", "Microsoft", "Google Cloud", "CoreWeave", "Lambda", "Oracle"}
        assert t.gpu_count >= 1
        assert t.vcpus >= 1
        assert t.memory_gib > 0


def test_model_names_match_keys() -> None:
    for name, model in GPU_MODELS.items():
        assert model.name == name
        assert model.memory_gib > 0
        assert model.memory_bandwidth_tbps > 0


@pytest.mark.parametrize(
    ("provider", "instance_type", "model", "count"),
    [
        ("AWS", "p5.48xlarge", "H100", 8),
        ("CoreWeave", "gd-8xh100ib-i128", "H100", 8),
        ("Lambda", "gpu_8x_a100_80gb_sxm4", "A100-80GB", 8),
        ("Oracle", "BM.GPU.L40S.4", "L40S", 4),
        ("AWS", "p5.4xlarge", "H100", 1),
        ("AWS", "p4d.24xlarge", "A100-40GB", 8),
        ("AWS", "p4de.24xlarge", "A100-80GB", 8),
        ("AWS", "p5e.48xlarge", "H200", 8),
        ("AWS", "p6-b200.48xlarge", "B200", 8),
        ("AWS", "p3dn.24xlarge", "V100-32GB", 8),
        ("AWS", "g4dn.12xlarge", "T4", 4),
        ("AWS", "g4dn.metal", "T4", 8),
        ("AWS", "g5.xlarge", "A10G", 1),
        ("AWS", "g5.48xlarge", "A10G", 8),
        ("AWS", "g6.24xlarge", "L4", 4),
        ("AWS", "g6e.12xlarge", "L40S", 4),
        ("AWS", "g6e.16xlarge", "L40S", 1),
        ("Microsoft", "Standard_ND96isr_H200_v5", "H200", 8),
        ("Microsoft", "Standard_ND96isr_H100_v5", "H100", 8),
        ("Microsoft", "Standard_NC80adis_H100_v5", "H100-NVL", 2),
        ("Microsoft", "Standard_ND96isr_MI300X_v5", "MI300X", 8),
        ("Microsoft", "Standard_NC64as_T4_v3", "T4", 4),
        ("Google Cloud", "a3-megagpu-8g", "H100", 8),
        ("Google Cloud", "a3-highgpu-2g", "H100", 2),
        ("Google Cloud", "a2-megagpu-16g", "A100-40GB", 16),
        ("Google Cloud", "a3-ultragpu-8g", "H200", 8),
        ("Google Cloud", "a4-highgpu-8g", "B200", 8),
        ("Google Cloud", "g2-standard-24", "L4", 2),
        ("Google Cloud", "g2-standard-32", "L4", 1),
    ],
)
def test_well_known_types(provider: str, instance_type: str, model: str, count: int) -> None:
    t = gpu_instance(provider, instance_type)
    assert t is not None
    assert (t.gpu_model, t.gpu_count) == (model, count)


def test_published_figures() -> None:
    p5 = GPU_INSTANCE_TYPES[("AWS", "p5.48xlarge")]
    assert (p5.vcpus, p5.memory_gib) == (192, 2048)
    assert GPU_MODELS["H100"].memory_gib == 80
    assert GPU_MODELS["H100"].memory_bandwidth_tbps == pytest.approx(3.35)
    assert GPU_MODELS["H200"].memory_gib == 141
    assert GPU_MODELS["A100-40GB"].memory_gib == 40
    assert GPU_MODELS["MI300X"].vendor == "AMD"
    g6e = GPU_INSTANCE_TYPES[("AWS", "g6e.48xlarge")]
    assert (g6e.vcpus, g6e.memory_gib) == (192, 1536)
    a2 = GPU_INSTANCE_TYPES[("Google Cloud", "a2-ultragpu-8g")]
    assert (a2.vcpus, a2.memory_gib) == (96, 1360)


@pytest.mark.parametrize(
    "spelling",
    [
        "Standard_ND96isr_H100_v5",
        "standard_nd96isr_h100_v5",
        "STANDARD_ND96ISR_H100_V5",
        "ND96isr_H100_v5",
        "nd96isr_h100_v5",
        "ND96isr H100 v5",
    ],
)
def test_azure_lookup_is_loose(spelling: str) -> None:
    t = gpu_instance("Microsoft", spelling)
    assert t is not None
    assert t.instance_type == "Standard_ND96isr_H100_v5"
    assert t.gpu_count == 8


def test_aws_and_gcp_lookup_is_exact() -> None:
    assert gpu_instance("AWS", "P5.48XLARGE") is None
    assert gpu_instance("Google Cloud", "A3-MEGAGPU-8G") is None
    assert gpu_instance("Google Cloud", "p5.48xlarge") is None


@pytest.mark.parametrize(
    ("provider", "instance_type"),
    [
        ("AWS", "m5.large"),
        ("AWS", ""),
        ("Microsoft", "Standard_D4s_v5"),
        ("Google Cloud", "n2-standard-8"),
        ("Oracle", "VM.Standard.E5.Flex"),
        ("Nebius", "gpu-h100-sxm"),  # unlisted providers are known by their charges' SkuPriceDetails GpuCount
        ("CoreWeave", "p5.48xlarge"),  # an instance type belongs to its provider
    ],
)
def test_unknown_type_is_none(provider: str, instance_type: str) -> None:
    assert gpu_instance(provider, instance_type) is None


def test_catalog_rows_sorted_unique_and_complete() -> None:
    rows = catalog_rows()
    assert rows == sorted(rows)
    keys = [(r[0], r[1]) for r in rows]
    assert len(keys) == len(set(keys)) == len(GPU_INSTANCE_TYPES)
    by_key = {(r[0], r[1]): r for r in rows}
    assert by_key[("AWS", "p5.48xlarge")] == ("AWS", "p5.48xlarge", "H100", 8, 80.0, 3.35)
    for provider, instance_type, model, count, mem, bw in rows:
        assert isinstance(count, int)
        assert isinstance(mem, float)
        assert isinstance(bw, float)
        assert GPU_MODELS[model].memory_gib == mem
        assert GPU_INSTANCE_TYPES[(provider, instance_type)].gpu_count == count


def test_entries_are_frozen() -> None:
    t = GPU_INSTANCE_TYPES[("AWS", "p5.48xlarge")]
    assert isinstance(t, GpuInstanceType)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.gpu_count = 4  # type: ignore[misc]


def test_every_azure_size_round_trips_loosely() -> None:
    azure = [t for t in GPU_INSTANCE_TYPES.values() if t.provider == "Microsoft"]
    assert azure
    for t in azure:
        assert gpu_instance("Microsoft", t.instance_type) is t
        assert gpu_instance("Microsoft", t.instance_type.lower().removeprefix("standard_")) is t
