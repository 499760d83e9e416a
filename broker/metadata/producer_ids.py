"""Producer id limits shared by the controller's allocation and the broker's InitProducerId."""

from __future__ import annotations

MAX_EPOCH = 32767
