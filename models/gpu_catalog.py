"""GPU models and the cloud instance / VM types that carry them, as reviewed reference data.

Loaded into the warehouse as a reference table (see :func:`catalog_rows`) so that GPU showback can turn an
instance-hour from a FOCUS ``ResourceType`` / SKU into GPU-hours and GPU memory. No I/O happens here.

Sources of the figures (vendor pages, by name):

* Dense 16-bit tensor throughput, FP8/FP4 support and interconnect: the same data sheets (the figures without
  sparsity; H100 SXM 989 TFLOPS BF16, B200 2.25 PFLOPS, L40S 362, A100 312, MI300X 1,307).
* GPU memory and bandwidth, per GPU: NVIDIA data sheets "NVIDIA V100 Tensor Core GPU", "NVIDIA T4 Tensor
  Core GPU", "NVIDIA A10 Tensor Core GPU", "NVIDIA A100 Tensor Core GPU" (40GB SXM 1,555 GB/s; 80GB SXM
  2,039 GB/s), "NVIDIA L4 Tensor Core GPU", "NVIDIA L40S", "NVIDIA H100 Tensor Core GPU" (H100 SXM 80 GB
  3.35 TB/s; H100 NVL 94 GB 3.9 TB/s), "NVIDIA H200 Tensor Core GPU" (141 GB 4.8 TB/s), "NVIDIA DGX B200" /
  "HGX B200" (1,440 GB per 8 GPUs, i.e. 180 GB and 8 TB/s each); AMD "AMD Instinct MI300X Accelerator"
  data sheet (192 GB HBM3, 5.3 TB/s); the A10G (an AWS-only A10 variant) from the Amazon EC2 G5 page.
* AWS: "Amazon EC2 instance types - Accelerated computing" specifications (docs.aws.amazon.com/ec2/latest/
  instancetypes/ac.html) and the product pages "Amazon EC2 P4/P5/P6/G4/G5/G6/G6e Instances".
* Azure: Microsoft Learn "Sizes for virtual machines in Azure - GPU accelerated" series pages (ND A100 v4,
  NDm A100 v4, NC A100 v4, ND H100 v5, ND H200 v5, NC H100 v5, ND MI300X v5, NCasT4_v3, NVadsA10 v5).
* Google Cloud: Compute Engine "Accelerator-optimized machine family" and "GPU machine types" pages.
* Specialist GPU clouds: CoreWeave "GPU instances" (CKS instance types, e.g. gd-8xh100ib-i128: 8 H100, 128 vCPUs,
  2,048 GB) and its pricing page; Lambda Cloud's instance types (gpu_8x_h100_sxm5); Oracle Cloud Infrastructure
  "Compute Shapes" (bare-metal GPU shapes; an OCPU is two vCPUs).

Units: GPU memory is the vendor's nominal per-GPU capacity (HBM stacks are binary-sized, so "80 GB" is 80 GiB
of DRAM; the driver reports slightly less usable). Host memory is as each cloud prints it: AWS in GiB;
Azure and Google Cloud label binary units "GB"/"GiB" inconsistently, and the printed number is kept.
Bandwidth is per GPU in TB/s (decimal, as vendors quote it).

Provider names are the FOCUS ``ProviderName`` values the project stores: ``AWS``, ``Microsoft``,
``Google Cloud``, and the specialist clouds' own (``CoreWeave``, ``Lambda``, ``Oracle``). A GPU node of any other
provider (Nebius, Crusoe, ...) is still recognized by the FOCUS ``SkuPriceDetails`` key ``GpuCount`` on its
charges. Fractional-GPU sizes (e.g. Azure NV6ads_A10_v5, 1/6 of an A10) are left out: a GPU count
here is always whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.aws import AWS_PROVIDER_NAME as AWS
from models.azure import AZURE_PROVIDER_NAME as AZURE
from models.gcp import GCP_PROVIDER_NAME as GOOGLE_CLOUD


@dataclass(frozen=True, slots=True)
class GpuModel:
    """One accelerator model. ``memory_gib``, ``memory_bandwidth_tbps`` and ``dense_tflops`` are per GPU."""

    name: str
    vendor: str
    memory_gib: float
    memory_bandwidth_tbps: float
    architecture: str
    dense_tflops: float
    """Dense (no sparsity) 16-bit tensor throughput: BF16, FP16 where the GPU has no BF16 (V100, T4)."""
    fp8: bool
    """Tensor cores run FP8 (Ada, Hopper, Blackwell, CDNA 3): up to twice the 16-bit throughput."""
    fp4: bool
    """Tensor cores run FP4 (Blackwell)."""
    interconnect: str
    """GPU-to-GPU link of the multi-GPU instances that carry it, with its bandwidth per GPU."""


@dataclass(frozen=True, slots=True)
class GpuInstanceType:
    """One cloud instance / VM type with a fixed number of whole GPUs of one model."""

    provider: str
    instance_type: str
    gpu_model: str
    gpu_count: int
    vcpus: int
    memory_gib: float


_MODELS: tuple[GpuModel, ...] = (
    GpuModel("V100", "NVIDIA", 16, 0.9, "Volta", 125, False, False, "NVLink 2 (300 GB/s)"),
    GpuModel("V100-32GB", "NVIDIA", 32, 0.9, "Volta", 125, False, False, "NVLink 2 (300 GB/s)"),
    GpuModel("T4", "NVIDIA", 16, 0.32, "Turing", 65, False, False, "PCIe Gen3"),
    GpuModel("A10G", "NVIDIA", 24, 0.6, "Ampere", 70, False, False, "PCIe Gen4"),
    GpuModel("A10", "NVIDIA", 24, 0.6, "Ampere", 125, False, False, "PCIe Gen4"),
    GpuModel("A100-40GB", "NVIDIA", 40, 1.555, "Ampere", 312, False, False, "NVLink 3 (600 GB/s)"),
    # SXM figure; Azure NC A100 v4 carries the PCIe card (1.935 TB/s), kept under this name.
    GpuModel("A100-80GB", "NVIDIA", 80, 2.039, "Ampere", 312, False, False, "NVLink 3 (600 GB/s)"),
    GpuModel("L4", "NVIDIA", 24, 0.3, "Ada Lovelace", 121, True, False, "PCIe Gen4"),
    GpuModel("L40S", "NVIDIA", 48, 0.864, "Ada Lovelace", 362, True, False, "PCIe Gen4"),
    GpuModel("H100", "NVIDIA", 80, 3.35, "Hopper", 989, True, False, "NVLink 4 (900 GB/s)"),
    GpuModel("H100-NVL", "NVIDIA", 94, 3.9, "Hopper", 835, True, False, "NVLink bridge (600 GB/s)"),
    GpuModel("H200", "NVIDIA", 141, 4.8, "Hopper", 989, True, False, "NVLink 4 (900 GB/s)"),
    GpuModel("B200", "NVIDIA", 180, 8.0, "Blackwell", 2250, True, True, "NVLink 5 (1.8 TB/s)"),
    GpuModel("MI300X", "AMD", 192, 5.3, "CDNA 3", 1307, True, False, "Infinity Fabric (896 GB/s)"),
)

GPU_MODELS: dict[str, GpuModel] = {m.name: m for m in _MODELS}


def _aws_family(
    family: str, model: str, gib_per_vcpu: int, sizes: tuple[tuple[str, int, int], ...]
) -> list[GpuInstanceType]:
    """AWS G families scale memory linearly with vCPUs: (size, vcpus, gpus) -> instance types."""
    return [
        GpuInstanceType(AWS, f"{family}.{size}", model, gpus, vcpus, vcpus * gib_per_vcpu)
        for size, vcpus, gpus in sizes
    ]


def _gcp_family(
    prefix: str, model: str, vcpus_per_gpu: int, gb_per_gpu: int, counts: tuple[int, ...]
) -> list[GpuInstanceType]:
    """Google A2/A3 High types scale vCPUs and memory per GPU: a2-highgpu-{n}g."""
    return [
        GpuInstanceType(GOOGLE_CLOUD, f"{prefix}-{n}g", model, n, n * vcpus_per_gpu, n * gb_per_gpu) for n in counts
    ]


# xlarge..16xlarge carry one GPU; 12xlarge/24xlarge four; 48xlarge eight.
_G_SIZES: tuple[tuple[str, int, int], ...] = (
    ("xlarge", 4, 1),
    ("2xlarge", 8, 1),
    ("4xlarge", 16, 1),
    ("8xlarge", 32, 1),
    ("16xlarge", 64, 1),
    ("12xlarge", 48, 4),
    ("24xlarge", 96, 4),
    ("48xlarge", 192, 8),
)
_G4DN_SIZES: tuple[tuple[str, int, int], ...] = (*_G_SIZES[:6], ("metal", 96, 8))

_AWS: list[GpuInstanceType] = [
    GpuInstanceType(AWS, "p3.2xlarge", "V100", 1, 8, 61),
    GpuInstanceType(AWS, "p3.8xlarge", "V100", 4, 32, 244),
    GpuInstanceType(AWS, "p3.16xlarge", "V100", 8, 64, 488),
    GpuInstanceType(AWS, "p3dn.24xlarge", "V100-32GB", 8, 96, 768),
    GpuInstanceType(AWS, "p4d.24xlarge", "A100-40GB", 8, 96, 1152),
    GpuInstanceType(AWS, "p4de.24xlarge", "A100-80GB", 8, 96, 1152),
    GpuInstanceType(AWS, "p5.4xlarge", "H100", 1, 16, 256),
    GpuInstanceType(AWS, "p5.48xlarge", "H100", 8, 192, 2048),
    GpuInstanceType(AWS, "p5e.48xlarge", "H200", 8, 192, 2048),
    GpuInstanceType(AWS, "p5en.48xlarge", "H200", 8, 192, 2048),
    GpuInstanceType(AWS, "p6-b200.48xlarge", "B200", 8, 192, 2048),
    *_aws_family("g4dn", "T4", 4, _G4DN_SIZES),
    *_aws_family("g5", "A10G", 4, _G_SIZES),
    *_aws_family("g6", "L4", 4, _G_SIZES),
    *_aws_family("g6e", "L40S", 8, _G_SIZES),
]

_AZURE: list[GpuInstanceType] = [
    GpuInstanceType(AZURE, "Standard_ND96asr_v4", "A100-40GB", 8, 96, 900),
    GpuInstanceType(AZURE, "Standard_ND96amsr_A100_v4", "A100-80GB", 8, 96, 1900),
    GpuInstanceType(AZURE, "Standard_NC24ads_A100_v4", "A100-80GB", 1, 24, 220),
    GpuInstanceType(AZURE, "Standard_NC48ads_A100_v4", "A100-80GB", 2, 48, 440),
    GpuInstanceType(AZURE, "Standard_NC96ads_A100_v4", "A100-80GB", 4, 96, 880),
    GpuInstanceType(AZURE, "Standard_ND96isr_H100_v5", "H100", 8, 96, 1900),
    GpuInstanceType(AZURE, "Standard_ND96isr_H200_v5", "H200", 8, 96, 1850),
    GpuInstanceType(AZURE, "Standard_NC40ads_H100_v5", "H100-NVL", 1, 40, 320),
    GpuInstanceType(AZURE, "Standard_NC80adis_H100_v5", "H100-NVL", 2, 80, 640),
    GpuInstanceType(AZURE, "Standard_ND96isr_MI300X_v5", "MI300X", 8, 96, 1850),
    GpuInstanceType(AZURE, "Standard_NC4as_T4_v3", "T4", 1, 4, 28),
    GpuInstanceType(AZURE, "Standard_NC8as_T4_v3", "T4", 1, 8, 56),
    GpuInstanceType(AZURE, "Standard_NC16as_T4_v3", "T4", 1, 16, 110),
    GpuInstanceType(AZURE, "Standard_NC64as_T4_v3", "T4", 4, 64, 440),
    GpuInstanceType(AZURE, "Standard_NV36ads_A10_v5", "A10", 1, 36, 440),
    GpuInstanceType(AZURE, "Standard_NV36adms_A10_v5", "A10", 1, 36, 880),
    GpuInstanceType(AZURE, "Standard_NV72ads_A10_v5", "A10", 2, 72, 880),
]

_GOOGLE_CLOUD: list[GpuInstanceType] = [
    *_gcp_family("a2-highgpu", "A100-40GB", 12, 85, (1, 2, 4, 8)),
    GpuInstanceType(GOOGLE_CLOUD, "a2-megagpu-16g", "A100-40GB", 16, 96, 1360),
    *_gcp_family("a2-ultragpu", "A100-80GB", 12, 170, (1, 2, 4, 8)),
    *_gcp_family("a3-highgpu", "H100", 26, 234, (1, 2, 4, 8)),
    GpuInstanceType(GOOGLE_CLOUD, "a3-megagpu-8g", "H100", 8, 208, 1872),
    GpuInstanceType(GOOGLE_CLOUD, "a3-edgegpu-8g", "H100", 8, 208, 1872),
    GpuInstanceType(GOOGLE_CLOUD, "a3-ultragpu-8g", "H200", 8, 224, 2952),
    GpuInstanceType(GOOGLE_CLOUD, "a4-highgpu-8g", "B200", 8, 224, 3968),
    *(
        GpuInstanceType(GOOGLE_CLOUD, f"g2-standard-{vcpus}", "L4", gpus, vcpus, vcpus * 4)
        for vcpus, gpus in ((4, 1), (8, 1), (12, 1), (16, 1), (24, 2), (32, 1), (48, 4), (96, 8))
    ),
]

COREWEAVE = "CoreWeave"
LAMBDA = "Lambda"
ORACLE = "Oracle"

_SPECIALIST_CLOUDS: list[GpuInstanceType] = [
    GpuInstanceType(COREWEAVE, "gd-8xh100ib-i128", "H100", 8, 128, 2048),
    GpuInstanceType(COREWEAVE, "gd-8xh200ib-i128", "H200", 8, 128, 2048),
    GpuInstanceType(COREWEAVE, "b200-8x", "B200", 8, 128, 2048),
    GpuInstanceType(LAMBDA, "gpu_8x_h100_sxm5", "H100", 8, 208, 1800),
    GpuInstanceType(LAMBDA, "gpu_8x_a100_80gb_sxm4", "A100-80GB", 8, 240, 1800),
    GpuInstanceType(ORACLE, "BM.GPU.H100.8", "H100", 8, 224, 2048),
    GpuInstanceType(ORACLE, "BM.GPU.H200.8", "H200", 8, 224, 3072),
    GpuInstanceType(ORACLE, "BM.GPU.A100-v2.8", "A100-80GB", 8, 256, 2048),
    GpuInstanceType(ORACLE, "BM.GPU4.8", "A100-40GB", 8, 128, 2048),
    GpuInstanceType(ORACLE, "BM.GPU.L40S.4", "L40S", 4, 224, 1024),
    GpuInstanceType(ORACLE, "BM.GPU.MI300X.8", "MI300X", 8, 224, 2048),
]

GPU_INSTANCE_TYPES: dict[tuple[str, str], GpuInstanceType] = {
    (t.provider, t.instance_type): t for t in (*_AWS, *_AZURE, *_GOOGLE_CLOUD, *_SPECIALIST_CLOUDS)
}

_AZURE_PREFIX = "standard_"


def _azure_key(instance_type: str) -> str:
    """Billing exports and meter names spell Azure sizes loosely: any case, spaces, prefix optional."""
    key = instance_type.strip().lower().replace(" ", "_")
    return key.removeprefix(_AZURE_PREFIX)


_AZURE_INDEX: dict[str, GpuInstanceType] = {
    _azure_key(t.instance_type): t for t in GPU_INSTANCE_TYPES.values() if t.provider == AZURE
}


def gpu_instance(provider: str, instance_type: str) -> GpuInstanceType | None:
    """The catalog entry for an instance type, or None when it is not a known GPU type.

    Azure (``Microsoft``) lookups ignore case and accept the size with or without ``Standard_``; AWS and
    Google Cloud names are matched exactly, as their exports print them.
    """
    if provider == AZURE:
        return _AZURE_INDEX.get(_azure_key(instance_type))
    return GPU_INSTANCE_TYPES.get((provider, instance_type))


def catalog_rows() -> list[tuple[str, str, str, int, float, float]]:
    """Rows for the warehouse reference table, sorted by (provider, instance_type).

    Columns: provider, instance_type, gpu_model, gpu_count, gpu_memory_gib, gpu_memory_bandwidth_tbps; the
    last two are per GPU (multiply by gpu_count for the instance's total).
    """
    rows = []
    for t in GPU_INSTANCE_TYPES.values():
        model = GPU_MODELS[t.gpu_model]
        rows.append(
            (
                t.provider,
                t.instance_type,
                t.gpu_model,
                t.gpu_count,
                float(model.memory_gib),
                float(model.memory_bandwidth_tbps),
            )
        )
    return sorted(rows)
