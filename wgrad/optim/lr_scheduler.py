"""Learning-rate schedulers."""
__all__ = []
