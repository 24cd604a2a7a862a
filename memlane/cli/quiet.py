"""What a person running `memlane` sees: memlane's own messages, not the libraries' chatter.

Unless `--verbose`: no progress bars from model loading (transformers, huggingface_hub, tqdm), no
transformers advisories, and log records below WARNING only from memlane's own loggers (ONNX
Runtime's quantizer, for one, logs INFO lines on the root logger while the model is exported on a
first start). With `--verbose` everything shows, as before.
"""

from __future__ import annotations

import logging
import os
import warnings

QUIET_ENV = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # also transformers' "Loading weights" bar
    "TQDM_DISABLE": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}
NOISY_LOGGERS = ("onnxruntime", "transformers", "huggingface_hub", "torch", "filelock", "urllib3", "httpx",
                 "httpcore")


class OwnRecordsOnly(logging.Filter):
    """Below WARNING, only records of memlane's loggers (and of the program itself) pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        name = record.name
        return name == "memlane" or name.startswith("memlane.") or name == "__main__"


OWN_RECORDS_ONLY = OwnRecordsOnly()


def quiet_third_party(verbose: bool) -> None:
    if verbose:
        return
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger().addFilter(OWN_RECORDS_ONLY)
    warnings.filterwarnings("ignore", module=r"(transformers|torch|onnxruntime|huggingface_hub|onnx)(\.|$)")


def quiet_handlers(verbose: bool) -> None:
    """After logging.basicConfig: records that propagate from libraries' loggers meet the
    handlers, not the root logger's filter."""
    if verbose:
        return
    for handler in logging.getLogger().handlers:
        handler.addFilter(OWN_RECORDS_ONLY)
