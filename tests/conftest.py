"""Shared fixtures: the real Touchstone channels in ../shared/channels (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "channels"


def shared_file(rel: str) -> Path:
    """Path of a file in ../shared/channels; skips the test when the folder or file is absent."""
    p = SHARED / rel
    if not p.exists():
        pytest.skip(f"shared channel data not available: {p}")
    return p


@pytest.fixture
def shared():
    return shared_file
