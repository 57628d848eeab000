"""``wgrad.distributions.constraint_registry``: from a constraint to a transform that
reaches it from unconstrained reals, as torch.distributions.constraint_registry.

``biject_to(c)`` gives a bijective transform onto ``c`` (for HMC and the like: its
inverse and log-Jacobian are exact); ``transform_to(c)`` a transform into ``c`` that may
not be bijective (for optimizing unconstrained parameters, e.g. softmax onto the
simplex). Both look the constraint's type up; ``register`` adds a type's factory.

Example
-------
>>> from wgrad.distributions import constraints
>>> biject_to(constraints.positive)(wgrad.tensor([0.0]))
tensor([1.])
"""
from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]

_Number = (int, float, bool)  # torch.types._Number


class ConstraintRegistry:
    """A table from constraint types to factories ``factory(constraint) -> Transform``.

    Example
    -------
    >>> from wgrad.distributions import constraints
    >>> registry = ConstraintRegistry()
    >>> _ = registry.register(constraints.real, lambda c: transforms.ExpTransform())
    >>> registry(constraints.real)
    ExpTransform()
    """

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Register ``factory`` for ``constraint`` (a Constraint subclass, or an
        instance standing for its class); without ``factory``, a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint,
                                                              constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        """The transform registered for ``constraint``'s type, made for it."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register_both(*constraint_types):
    """A decorator registering its factory in both registries, for each type."""
    def register(factory):
        for c in constraint_types:
            biject_to.register(c, factory)
            transform_to.register(c, factory)
        return factory
    return register


@_register_both(constraints.real)
def _transform_to_real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    return transforms.IndependentTransform(biject_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    return transforms.IndependentTransform(transform_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


@_register_both(constraints.greater_than, constraints.greater_than_eq)
def _transform_to_greater_than(constraint):
    # positive and nonnegative are instances of these types: they get Exp then Affine(0.0, 1)
    # (torch also registers ExpTransform for them first, which this then replaces)
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


@_register_both(constraints.less_than)
def _transform_to_less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


@_register_both(constraints.interval, constraints.half_open_interval)
def _transform_to_interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, _Number) and lower == 0 and isinstance(upper, _Number) and upper == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(lower, upper - lower)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@_register_both(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return transforms.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                                   constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return transforms.CatTransform([transform_to(c) for c in constraint.cseq],
                                   constraint.dim, constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq],
                                     constraint.dim)
