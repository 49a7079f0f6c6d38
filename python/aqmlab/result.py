"""The results of one run, as a dict and as pandas DataFrames.

A :class:`Result` holds the JSON text the simulator produced and nothing else; the
parsed dict and the DataFrames are built on first use. So a result pickles as that
text (small, and independent of pandas versions) and crosses process boundaries
cheaply.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def _expand(row: dict[str, Any], key: str) -> dict[str, Any]:
    """Replaces the dict ``row[key]`` (counts by reason) by ``key_<reason>`` columns
    where it stood."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if k == key and isinstance(v, dict):
            for reason, n in v.items():
                out[f"{key}_{reason}"] = n
        else:
            out[k] = v
    return out


class Result:
    """What one run produced.

    - ``summary``: the dict ``aqmlab run --json`` prints (everything but the per-link
      per-flow table).
    - ``flows``: one row per flow (goodput, drops by reason as ``drops_<reason>``,
      marks, RTT, retransmits, fair share).
    - ``groups``: one row per flow group, indexed by group name.
    - ``links``: one row per monitored link direction (drops and marks by reason).
    - ``queue``: the sampled backlog of every monitored link, long format
      (``link, t_s, packets, bytes``).
    - ``link_flows``: each flow's throughput across each monitored link, and its
      mean number of packets in that link's queue.
    - ``fairness``: Jain's index and the coefficient of variation, over TCP flows,
      over all flows and per group.

    Rates are bit/s and counts are events inside the measured interval (after the
    warm-up).
    """

    __slots__ = ("_data", "_frames", "_json")

    def __init__(self, json_text: str) -> None:
        self._json = json_text
        self._data: dict[str, Any] | None = None
        self._frames: dict[str, pd.DataFrame] = {}

    @classmethod
    def from_json(cls, json_text: str) -> Result:
        """A result from :meth:`to_json`'s text."""
        return cls(json_text)

    def to_json(self) -> str:
        """The full results (``summary`` plus ``link_flows``) as JSON text."""
        return self._json

    def __reduce__(self) -> tuple[type[Result], tuple[str]]:
        return (Result, (self._json,))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return self._json == other._json

    def __hash__(self) -> int:
        return hash(self._json)

    # ---- plain data -------------------------------------------------------------

    @property
    def data(self) -> dict[str, Any]:
        """Everything, as parsed from the JSON (do not modify it)."""
        if self._data is None:
            self._data = json.loads(self._json)
        return self._data

    @property
    def summary(self) -> dict[str, Any]:
        """The ``aqmlab run --json`` summary, as a new dict."""
        return _summary(self._json)

    @property
    def scenario(self) -> str:
        return self.data["scenario"]

    @property
    def seed(self) -> int:
        return self.data["seed"]

    @property
    def fairness(self) -> dict[str, Any]:
        return self.data["fairness"]

    # ---- tables -----------------------------------------------------------------

    def _frame(self, name: str, build) -> pd.DataFrame:
        frame = self._frames.get(name)
        if frame is None:
            frame = self._frames[name] = build()
        return frame

    @property
    def flows(self) -> pd.DataFrame:
        def build():
            import pandas as pd

            return pd.DataFrame([_expand(f, "drops") for f in self.data["flows"]])

        return self._frame("flows", build)

    @property
    def groups(self) -> pd.DataFrame:
        def build():
            import pandas as pd

            groups = self.data["groups"]
            return pd.DataFrame(list(groups.values()), index=pd.Index(list(groups), name="group"))

        return self._frame("groups", build)

    @property
    def links(self) -> pd.DataFrame:
        def build():
            import pandas as pd

            rows = []
            for link in self.data["links"]:
                row = {k: v for k, v in link.items() if k != "queue"}
                rows.append(_expand(_expand(row, "drops"), "marks"))
            return pd.DataFrame(rows)

        return self._frame("links", build)

    @property
    def queue(self) -> pd.DataFrame:
        def build():
            import numpy as np
            import pandas as pd

            links = self.data["links"]
            lengths = [len(link["queue"]["t_s"]) for link in links]

            def column(key: str, dtype) -> np.ndarray:
                parts = [np.asarray(link["queue"][key], dtype=dtype) for link in links]
                return np.concatenate(parts) if parts else np.empty(0, dtype=dtype)

            return pd.DataFrame(
                {
                    "link": np.repeat(np.array([link["name"] for link in links], dtype=object), lengths),
                    "t_s": column("t_s", np.float64),
                    "packets": column("packets", np.int64),
                    "bytes": column("bytes", np.int64),
                }
            )

        return self._frame("queue", build)

    @property
    def link_flows(self) -> pd.DataFrame:
        def build():
            import pandas as pd

            return pd.DataFrame(
                self.data["link_flows"],
                columns=["link", "flow", "throughput_bps", "packets", "mean_queue_packets"],
            )

        return self._frame("link_flows", build)

    # ---- display ----------------------------------------------------------------

    def __repr__(self) -> str:
        d = self.data
        lines = [
            f"<aqmlab.Result {d['scenario']!r} seed={d['seed']}: "
            f"{d['duration_s']:g} s simulated, measured after {d['warmup_s']:g} s, "
            f"{len(d['flows'])} flows, {d['events']} events"
        ]
        for name, g in d["groups"].items():
            lines.append(
                f"  group {name}: {g['count']} x {g['kind']}, goodput {g['goodput_bps'] / 1e3:.1f} kb/s "
                f"({g['goodput_mean_bps'] / 1e3:.1f} per flow), drops {g['drops_total']}, "
                f"jain {g['jain']:.3f}"
            )
        for link in d["links"]:
            lines.append(
                f"  link {link['name']}: {link['qdisc']}, utilization {link['utilization']:.3f}, "
                f"mean queue {link['mean_queue_packets']:.1f} pkts, drops {link['drops_total']}, "
                f"marks {link['marks_total']}"
            )
        f = d["fairness"]
        lines.append(f"  fairness: tcp jain {f['tcp']['jain']:.3f}, all flows jain {f['all']['jain']:.3f}>")
        return "\n".join(lines)


def _summary(json_text: str) -> dict[str, Any]:
    data = json.loads(json_text)
    data.pop("link_flows", None)
    return data
