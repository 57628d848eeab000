"""LBFGS."""
__all__ = ["LBFGS"]


class LBFGS:
    pass
