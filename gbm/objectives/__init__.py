"""Objectives: gradients and hessians of the loss, starting margins, links and default
metrics, one module per family; ``get_objective(params)`` picks one."""
from .pointwise import OBJECTIVES, get_objective

__all__ = ["OBJECTIVES", "get_objective"]
