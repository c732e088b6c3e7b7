"""What this Python can do for zoobench's Python backends, as JSON-friendly facts."""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional


def torch_compile_missing(torch_module) -> Optional[str]:
    """Why torch.compile cannot run with this torch, or None."""
    if not hasattr(torch_module, "compile"):
        return (f"torch.compile needs PyTorch >= 2.0; this Python ({sys.executable}) has "
                f"{torch_module.__version__}")
    return None


def describe(_argument: Any = None) -> Dict[str, Any]:
    """torch's version and whether torch.compile exists. The names dynamo knows are
    dynamo_backends()'s: listing them imports every backend dynamo has (onnxruntime's among
    them), seconds that a model's process need not spend on a name its run already checked."""
    import torch

    facts: Dict[str, Any] = {"python": sys.version.split()[0], "executable": sys.executable,
                             "torch": torch.__version__, "cuda": bool(torch.cuda.is_available())}
    missing = torch_compile_missing(torch)
    facts["torch_compile"] = missing is None
    if missing:
        facts["why_not"] = missing
    return facts


def dynamo_backends(_argument: Any = None) -> List[str]:
    """The names dynamo knows (torch._dynamo.list_backends, experimental ones included); none
    without torch.compile."""
    import torch

    if torch_compile_missing(torch):
        return []
    import torch._dynamo

    try:
        names = torch._dynamo.list_backends(exclude_tags=())
    except TypeError:  # older signature
        names = torch._dynamo.list_backends()
    return sorted(names)
