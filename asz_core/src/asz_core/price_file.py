"""Which price file a ledger prices with, and what a ledger says of it (its path, SHA-256, source
and date): no prices read here. Apart from :mod:`.pricing` so that a ledger whose summaries are all
kept names its price file without importing what prices a call (model ids, genai-prices' rules).
"""

from __future__ import annotations

from pathlib import Path

from attrs import frozen

from .errors import AszError

PRICES_DIR = Path(__file__).resolve().parent / "prices"
"""Where asz ships its snapshot of the genai-prices data."""
SNAPSHOT_PREFIX = "genai-prices-"


class PriceFileError(AszError):
    """A price file that cannot be read as genai-prices data."""


@frozen
class PriceFile:
    """The price file a ledger names: where it is and its SHA-256."""

    path: str
    sha256: str
    source: str | None
    """What the data is (``genai-prices 0.2.3``), when the file says."""
    taken: str | None
    """The date the snapshot was taken, when the file says."""
    shipped: bool
    """True for the snapshot asz ships."""

    @property
    def name(self) -> str:
        return Path(self.path).name


@frozen
class UpdateResult:
    """What ``asz prices update`` did: the snapshot it left, whether it wrote one, what it removed."""

    file: PriceFile
    changed: bool
    removed: tuple[str, ...]


def shipped_snapshots(folder: Path = PRICES_DIR) -> list[Path]:
    return sorted(folder.glob(f"{SNAPSHOT_PREFIX}*.json"))


def default_price_file() -> Path:
    found = shipped_snapshots()
    if not found:
        raise PriceFileError(f"no price snapshot in {PRICES_DIR}; run `asz prices update`")
    return found[-1]
