"""``wgrad.autograd.anomaly_mode``: torch.autograd.anomaly_mode's names (NOTE [Anomaly
mode] in ``wgrad._autograd.anomaly_mode``)."""
from .._autograd.anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled,
                                      is_anomaly_enabled, set_detect_anomaly)

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]
