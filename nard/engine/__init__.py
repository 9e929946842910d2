"""Computer players. For now a fast heuristic player; the neural engine comes later."""

from __future__ import annotations

from nard.engine.heuristic import HeuristicPlayer, heuristic_score

__all__ = ["HeuristicPlayer", "heuristic_score"]
