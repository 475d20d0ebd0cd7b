"""Evaluation metrics: pointwise (``pointwise``) and ranking (``ranking``);
``get_metric(name, params)`` picks one."""
from .pointwise import METRICS, check_metric_name, get_metric, maximizes

__all__ = ["METRICS", "check_metric_name", "get_metric", "maximizes"]
