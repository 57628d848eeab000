"""torch's elementwise aliases (arccos, divide, greater, fix, ...) and the elementwise,
comparison and integration functions added with them (gcd, lcm, i0, frexp, ldexp, nextafter,
mvlgamma, the bitwise shifts, is_signed, is_same_size, is_nonzero, can_cast, trapz,
cumulative_trapezoid, fill), against torch: values and dtypes, errors, gradients
(gradcheck, gradgradcheck, the JAX identity, and torch's own gradient), ``out=`` and the
in-place forms."""
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest

import wgrad
from _outcome import outcome
from wgrad.testing import check_op

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf
ALIASES = {"arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh",
           "arcsinh": "asinh", "arctanh": "atanh", "arctan2": "atan2", "divide": "div",
           "multiply": "mul", "subtract": "sub", "greater": "gt", "greater_equal": "ge",
           "less": "lt", "less_equal": "le", "not_equal": "ne", "fix": "trunc"}
NEW = ("gcd", "lcm", "i0", "frexp", "ldexp", "nextafter", "mvlgamma", "bitwise_left_shift",
       "bitwise_right_shift", "is_signed", "is_same_size", "is_nonzero", "can_cast", "trapz",
       "cumulative_trapezoid", "fill")
DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128")


def _run(T, fn):
    """``fn(T)`` as a list of (dtype name, numpy value) or plain values, or ``(type,
    message)`` if it raises."""
    r = outcome(T, fn)
    if isinstance(r, tuple):
        return r
    out = []
    for x in r:
        if hasattr(x, "detach"):
            x = x.detach().resolve_conj()
            name = str(x.dtype).rsplit(".", 1)[-1]
            x = (name, (x.float() if name == "bfloat16" else x).numpy())
        out.append(x)
    return out


def _tol(name):
    return {"float64": (1e-6, 1e-8), "complex128": (1e-6, 1e-8), "float32": (1.3e-6, 1e-5),
            "complex64": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5),
            "bfloat16": (1.6e-2, 1e-5)}.get(name, (0, 0))


def _same(fn):
    a, b = _run(wgrad, fn), _run(torch, fn)
    if isinstance(b, tuple) or isinstance(a, tuple):
        assert a == b
        return
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if not isinstance(y, tuple):
            assert x == y
            continue
        assert x[0] == y[0], (x[0], y[0])  # the dtype
        assert x[1].shape == y[1].shape
        rtol, atol = _tol(y[0])
        np.testing.assert_allclose(x[1], y[1], rtol=rtol, atol=atol, equal_nan=True)


def _f64(T, values):
    return T.tensor(values, dtype=T.float64)


def _x(T):
    return _f64(T, [0.5, -0.2, 0.9])


def _y(T):
    return T.tensor([[1., 2., 4.], [7., -1., 0.5]])


_I8 = [-128, -5, 3, 100, 1]
_Y = [1., 2., 4., 7.]

# ======================================================================================
# values and dtypes: name -> fn(torch or wgrad)
# ======================================================================================

VALUES = {
    # the aliases, as functions, methods and in place
    "arc_functions": lambda T: (
        T.arccos(_x(T)), T.arcsin(_x(T)), T.arctan(_x(T)), T.arccosh(_x(T) + 2),
        T.arcsinh(_x(T)), T.arctanh(_x(T)), T.arctan2(_x(T), _x(T) + 1)),
    "arc_methods": lambda T: (
        _x(T).arccos(), _x(T).arcsin(), _x(T).arctan(), (_x(T) + 2).arccosh(),
        _x(T).arcsinh(), _x(T).arctanh(), _x(T).arctan2(_x(T) + 1)),
    "arc_inplace": lambda T: (
        _x(T).arccos_(), _x(T).arcsin_(), _x(T).arctan_(), (_x(T) + 2).arccosh_(),
        _x(T).arcsinh_(), _x(T).arctanh_(), _x(T).arctan2_(_x(T) + 1)),
    "arc_complex": lambda T: (T.arccos(_x(T) + 1j), T.arctanh(_x(T) - 2j)),
    "arithmetic": lambda T: (
        T.divide(_x(T), 0.3), T.divide(_x(T), 0.3, rounding_mode="floor"),
        T.multiply(_x(T), 3), T.subtract(_x(T), 2, alpha=3), T.divide(T.tensor([7]), 2),
        _x(T).divide(0.3, rounding_mode="trunc"), _x(T).multiply(_x(T)),
        _x(T).subtract(1, alpha=2)),
    "arithmetic_inplace": lambda T: (
        _x(T).divide_(0.3, rounding_mode="floor"), _x(T).multiply_(_x(T)),
        _x(T).subtract_(1, alpha=2), T.tensor([7]).divide_(2, rounding_mode="trunc")),
    "comparisons": lambda T: (
        T.greater(_x(T), 0.1), T.greater_equal(_x(T), 0.5), T.less(_x(T), 0.5),
        T.less_equal(_x(T), 0.5), T.not_equal(_x(T), 0.5), _x(T).greater(0.1),
        _x(T).less_equal(_x(T) * 0 + 0.5), _x(T).greater_(0.1), _x(T).not_equal_(0.5)),
    "fix": lambda T: (T.fix(_x(T) * 3), (_x(T) * -3).fix(), (_x(T) * 3).fix_(),
                      T.fix(T.tensor([3]))),
    # gcd and lcm: non-negative, C's remainders; the most negative value keeps its sign
    "gcd_lcm": lambda T: (T.gcd(T.tensor([-4, 0, 0, 7, 12]), T.tensor([6, 0, -5, 3, -18])),
                          T.lcm(T.tensor([-4, 0, 0, 7, 12]), T.tensor([6, 0, -5, 3, -18]))),
    "gcd_lcm_int8_edge": lambda T: (
        T.gcd(T.tensor([-128], dtype=T.int8), T.tensor([0], dtype=T.int8)),
        T.lcm(T.tensor([-128], dtype=T.int8), T.tensor([3], dtype=T.int8))),
    "gcd_promotes_broadcasts": lambda T: (
        T.gcd(T.tensor([4], dtype=T.uint8), T.tensor([6], dtype=T.int8)),
        T.gcd(T.tensor([[4], [9]]), T.tensor([6, 3, 0])),
        T.tensor([4, 6], dtype=T.int32).gcd(T.tensor(6))),
    "gcd_lcm_inplace": lambda T: (T.tensor([7, 3]).gcd_(T.tensor([2, 6])),
                                  T.tensor([4, 3]).lcm_(T.tensor([6, 6]))),
    # shifts: out of range (negative, or the width or more) gives 0, or -1 shifting right
    "shifts_int8": lambda T: (
        T.bitwise_left_shift(T.tensor(_I8, dtype=T.int8), T.tensor([1, 2, 7, 8, -1],
                                                                   dtype=T.int8)),
        T.bitwise_right_shift(T.tensor(_I8, dtype=T.int8), T.tensor([1, 2, 7, 8, -1],
                                                                    dtype=T.int8))),
    "shifts_promote": lambda T: (
        T.bitwise_left_shift(T.tensor(_I8, dtype=T.int8), T.tensor([9, 100, 0, -3, 64])),
        T.bitwise_right_shift(T.tensor(_I8, dtype=T.int8), T.tensor([9, 100, 0, -3, 64])),
        T.tensor([-5, 5]) >> T.tensor([-1, -1])),
    "shifts_uint8": lambda T: (
        T.bitwise_right_shift(T.tensor([200, 3], dtype=T.uint8),
                              T.tensor([1, 9], dtype=T.uint8)),
        T.bitwise_left_shift(T.tensor([200, 3], dtype=T.uint8),
                             T.tensor([1, 9], dtype=T.uint8))),
    "shifts_numbers_and_operators": lambda T: (
        T.bitwise_left_shift(3, T.tensor([2])), T.tensor([3], dtype=T.int8) << 2,
        2 << T.tensor([3]), 64 >> T.tensor([3]), T.tensor([1, 2]).bitwise_right_shift(1)),
    "shifts_inplace": lambda T: (
        *(lambda t: (t.__ilshift__(3), t))(T.tensor([1, 2])),
        (lambda t: t.__irshift__(T.tensor([1, 0])))(T.tensor([5, 2])),
        T.tensor([1, 2], dtype=T.int8).bitwise_left_shift_(T.tensor([1, 2])),
        T.tensor([-8, 8]).bitwise_right_shift_(2)),
    # i0 (half types computed in float32), integers in the default float
    "i0": lambda T: (T.i0(_f64(T, [0., 1., 50., -3., 800.])), T.i0(T.tensor([1, 2])),
                     T.i0(T.tensor([True])), T.tensor([1.]).i0(), T.tensor([1.]).i0_()),
    "i0_half": lambda T: (T.i0(T.tensor([1., 2.5, -4.], dtype=T.float16)),
                          T.i0(T.tensor([1., 2.5, -4.], dtype=T.bfloat16))),
    # frexp, subnormals included (JAX's own frexp gets them wrong on a CPU)
    "frexp_float64": lambda T: tuple(T.frexp(_f64(T, [
        0., -0., -3., 8., INF, -INF, NAN, 1e-310, 5e-324, 2.2250738585072014e-308]))),
    "frexp_float32": lambda T: tuple(T.tensor([1e-40, 3e-45, 1e-38, 2.0**-126, 3.4e38,
                                               -7.]).frexp()),
    "frexp_half": lambda T: (*T.frexp(T.tensor([3., 1e-7, 6e-8, 65504., -1e-5],
                                               dtype=T.float16)),
                             *T.frexp(T.tensor([3., 1e-39, -1e-20, 3e38], dtype=T.bfloat16))),
    "frexp_fields": lambda T: (lambda r: (r.mantissa, r.exponent, type(r).__name__))(
        T.frexp(T.tensor([6.]))),
    # ldexp: input * 2**other in a floating dtype, exact powers of two
    "ldexp": lambda T: (
        T.ldexp(T.tensor([1.5, -2.]), T.tensor([2., 3.])),
        T.ldexp(T.tensor([1, 2]), T.tensor([1, 2])),
        T.ldexp(_f64(T, [1., 2., 1e-300, 3.]), T.tensor([1, -1075, 1000, -1070])),
        T.ldexp(T.tensor([1., 2], dtype=T.float16), T.tensor([1, 2])),
        T.ldexp(T.tensor([True]), T.tensor([True])),
        T.ldexp(T.tensor([1., 2]), T.tensor([[1.], [2]])),
        T.tensor([1., 2]).ldexp(T.tensor([3, 4], dtype=T.int8))),
    "ldexp_complex": lambda T: (T.ldexp(T.tensor([1. + 1j]), T.tensor([3])),
                                T.ldexp(T.tensor([1.]), T.tensor([3 + 0j])),
                                T.ldexp(T.tensor([1. + 2j]), _f64(T, [1., 2]))),
    "ldexp_inplace": lambda T: (T.tensor([1., 2]).ldexp_(T.tensor([1, 2])),
                                T.tensor([1., 2], dtype=T.float16).ldexp_(T.tensor([1.]))),
    # nextafter: promotion, half types, the subnormal after 0
    "nextafter": lambda T: (
        T.nextafter(_f64(T, [1., 2, 0, 0]), _f64(T, [2., 1, -1, 1])),
        T.nextafter(T.tensor([1., 2, 0]), T.tensor([2., 1, 1])),
        T.nextafter(T.tensor([1., 2]), _f64(T, [2., 1])),
        T.nextafter(T.tensor([1., 2]), T.tensor([2, 1])),
        T.nextafter(T.tensor([1.], dtype=T.float16), T.tensor([2.], dtype=T.float16)),
        T.nextafter(T.tensor([1.], dtype=T.bfloat16), T.tensor([2.], dtype=T.bfloat16)),
        T.tensor([1.], dtype=T.float16).nextafter_(T.tensor([2.]))),
    # mvlgamma: no domain error in torch 2.13 (log|Gamma| below (p-1)/2, inf at poles)
    "mvlgamma": lambda T: (
        T.mvlgamma(_f64(T, [2.5, 3., 0.4, 0.6, 0.5, NAN]), 2),
        T.mvlgamma(_f64(T, [2.5, 3.]), p=3), T.mvlgamma(T.tensor([3, 4]), 2),
        T.tensor([2.25, 2.75]).mvlgamma(1), T.tensor([2.5]).mvlgamma_(3)),
    # predicates
    "is_signed": lambda T: [T.ones(1, dtype=getattr(T, d)).is_signed() for d in DTYPES] + [
        T.is_signed(T.ones(1, dtype=T.uint8))],
    "is_same_size": lambda T: (T.is_same_size(T.ones(2, 3), T.zeros(2, 3, dtype=T.int64)),
                               T.ones(2, 3).is_same_size(T.zeros(3, 2)),
                               T.ones(0).is_same_size(T.ones(0))),
    "is_nonzero": lambda T: (T.tensor([0.]).is_nonzero(), T.tensor([[2]]).is_nonzero(),
                             T.tensor(NAN).is_nonzero(), T.tensor(False).is_nonzero(),
                             T.is_nonzero(T.tensor(1j))),
    # torch.fill: a number (cast, range-checked) or a 0-d tensor (cast)
    "fill": lambda T: (
        T.fill(_x(T), 3.), T.fill(T.tensor([1, 2]), 2.7), T.fill(T.tensor([1., 2]),
                                                                  T.tensor(2.5)),
        T.fill(T.tensor([True, False]), 2), T.fill(T.tensor([1, 2], dtype=T.uint8), -1),
        T.fill(T.tensor([1, 2], dtype=T.uint8), -255), T.fill(T.tensor([1., 2]), True),
        T.fill(T.tensor([1j, 2]), 2 + 1j), T.fill(T.tensor([1., 2]), T.tensor(2.5 + 1j)),
        T.fill(T.tensor([1, 2], dtype=T.float16), INF),
        T.fill(T.tensor([1, 2], dtype=T.int8), -128.9)),
    # trapz and cumulative_trapezoid, with torch's shaping of x (one y shape, few kernels)
    "trapz": lambda T: (
        T.trapz(_y(T)), T.trapz(_y(T), dx=2.), T.trapz(_y(T), dx=2, dim=0),
        T.trapz(_y(T), T.tensor([0., 1, 3])), T.trapz(_y(T), x=_y(T) ** 2),
        T.trapz(T.tensor([1, 2, 4])), T.trapz(T.tensor([1, 2, 4]), T.tensor([1, 2, 4]))),
    "trapezoid_shapes": lambda T: (
        T.trapezoid(_y(T), T.tensor([0., 1]), dim=0),
        T.trapezoid(_y(T), T.tensor([[0., 1, 3]]), dim=0),
        T.trapezoid(T.arange(12.).reshape(2, 2, 3), _y(T) ** 2, dim=1),
        T.trapezoid(T.zeros(2, 0, 3), dim=1), T.trapezoid(T.zeros(2, 0, 3), T.zeros(5), dim=1),
        T.trapezoid(T.zeros(2, 0, 3, dtype=T.int64), dim=1),
        T.trapezoid(T.zeros(0, dtype=T.bool))),
    "cumulative_trapezoid": lambda T: (
        T.cumulative_trapezoid(_y(T)), T.cumulative_trapezoid(_y(T), dx=2),
        T.cumulative_trapezoid(_y(T), dx=2.5, dim=0),
        T.cumulative_trapezoid(_y(T), T.tensor([0., 1, 3])),
        T.cumulative_trapezoid(_y(T), _y(T) ** 2), T.cumulative_trapezoid(_y(T), x=_y(T)[:1]),
        T.cumulative_trapezoid(_y(T), T.tensor([0., 1]), dim=0),
        T.cumulative_trapezoid(T.tensor([1, 2, 4])),
        T.cumulative_trapezoid(T.tensor([1, 2, 4]), T.tensor([1, 2, 4]))),
    "cumulative_trapezoid_small_and_complex": lambda T: (
        T.cumulative_trapezoid(T.tensor([1.]), dx=2), T.cumulative_trapezoid(T.zeros(2, 0)),
        T.cumulative_trapezoid(T.zeros(2, 0, 3, dtype=T.int64), dim=1),
        T.cumulative_trapezoid(_y(T) * 1j, dx=2.5),
        T.cumulative_trapezoid(_y(T), T.tensor([1., 2., 4.], dtype=T.complex128))),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_and_dtypes_match_torch(name):
    _same(VALUES[name])


def test_can_cast_matches_torch_on_every_pair():
    for a in DTYPES:
        for b in DTYPES:
            assert wgrad.can_cast(getattr(wgrad, a), getattr(wgrad, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)
    assert wgrad.can_cast(from_=wgrad.float32, to=wgrad.complex64)


# ======================================================================================
# errors: torch's exception type and message
# ======================================================================================

def _fill_cases():
    """fill, fill_, masked_fill and setitem with numbers that overflow the dtype (and some
    that fit): c10's ``overflows`` rule."""
    values = {"uint8": (300, -256, -1.0, 255.5), "int8": (127.9, 128., -129, 2**40),
              "int32": (INF, NAN), "int64": (2**63,), "float16": (70000., 2**20),
              "bfloat16": (1e300,), "float32": (3.5e38, 3.4028235e38), "complex64": (
                  1e300, 1 + 1e300j), "bool": (2.5, 1 + 1j), "int16": (1 + 1j,)}
    cases = {}
    for d, vs in values.items():
        for v in vs:
            def make(d=d, v=v):
                return {
                    f"fill_{d}_{v}": lambda T: T.fill(T.zeros(2, dtype=getattr(T, d)), v),
                    f"fill__{d}_{v}": lambda T: T.zeros(2, dtype=getattr(T, d)).fill_(v),
                    f"masked_fill_{d}_{v}": lambda T: T.zeros(2, dtype=getattr(T, d)).masked_fill(
                        T.tensor([True, False]), v)}
            cases.update(make())
    # setitem checks no range for the half types (torch converts through a wider tensor)
    cases["setitem_int8_300"] = lambda T: T.zeros(2, dtype=T.int8).__setitem__(0, 300)
    cases["setitem_float32"] = lambda T: T.zeros(2).__setitem__(0, 1e300)
    cases["setitem_float16"] = lambda T: (lambda t: (t.__setitem__(0, 70000.), t)[1])(
        T.zeros(2, dtype=T.float16))
    return cases


ERRORS = {
    "divide_rounding_mode": lambda T: T.divide(_x(T), 2, rounding_mode="round"),
    "subtract_bools": lambda T: T.subtract(T.tensor([True]), T.tensor([False])),
    "divide_inplace_int": lambda T: T.tensor([7]).divide_(2),
    "greater_inplace_int": lambda T: T.tensor([7]).greater_(T.tensor([2.5])),
    "fix_complex": lambda T: T.fix(T.tensor([1j])),
    "arctan2_inplace_int": lambda T: T.tensor([1]).arctan2_(T.tensor([2])),
    "gcd_float": lambda T: T.gcd(T.tensor([4.]), T.tensor([6.])),
    "gcd_bool": lambda T: T.gcd(T.tensor([True]), T.tensor([True])),
    "gcd_zero_dim_float": lambda T: T.gcd(T.tensor([4]), T.tensor(6.)),
    "gcd_number": lambda T: T.gcd(T.tensor([4]), 6),
    "lcm_number_input": lambda T: T.lcm(4, T.tensor([6])),
    "lcm_float_inplace": lambda T: _x(T).lcm_(_x(T)),
    "shift_float": lambda T: T.tensor([1.5]) << 1,
    "shift_float_number": lambda T: T.tensor([3]) >> 1.5,
    "shift_bool": lambda T: T.bitwise_left_shift(T.tensor([True]), T.tensor([True])),
    "shift_complex": lambda T: T.tensor([1j]) << 1,
    "shift_float_inplace": lambda T: T.tensor([1., 2]).__irshift__(1),
    "shift_two_numbers": lambda T: T.bitwise_left_shift(3, 2),
    "i0_complex": lambda T: T.i0(T.tensor([1j])),
    "i0_number": lambda T: T.i0(3.),
    "i0_inplace_int": lambda T: T.tensor([7]).i0_(),
    "frexp_int": lambda T: T.frexp(T.tensor([1, 2])),
    "frexp_complex": lambda T: T.frexp(T.tensor([1j])),
    "ldexp_number": lambda T: T.ldexp(T.tensor([1., 2]), 3),
    "ldexp_shapes": lambda T: T.ldexp(T.tensor([1., 2]), T.tensor([1., 2, 3])),
    "ldexp_inplace_int": lambda T: T.tensor([1, 2]).ldexp_(T.tensor([1, 2])),
    "ldexp_inplace_complex": lambda T: T.tensor([1.]).ldexp_(T.tensor([1j])),
    "nextafter_int": lambda T: T.nextafter(T.tensor([1, 2]), T.tensor([2, 1])),
    "nextafter_number": lambda T: T.nextafter(T.tensor([1., 2]), 2.),
    "nextafter_complex": lambda T: T.nextafter(T.tensor([1j]), T.tensor([2j])),
    "mvlgamma_p0": lambda T: T.mvlgamma(T.tensor([3.]), 0),
    "mvlgamma_p_float": lambda T: T.mvlgamma(T.tensor([3.]), 2.0),
    "mvlgamma_complex": lambda T: T.mvlgamma(T.tensor([3j]), 2),
    "mvlgamma_bool": lambda T: T.mvlgamma(T.tensor([True]), 0),
    "mvlgamma_inplace_int": lambda T: T.tensor([1], dtype=T.int32).mvlgamma_(1),
    "mvlgamma_inplace_int_p0": lambda T: T.tensor([1], dtype=T.int32).mvlgamma_(0),
    "mvlgamma_inplace_complex": lambda T: T.tensor([1j]).mvlgamma_(1),
    "is_signed_number": lambda T: T.is_signed(3),
    "is_same_size_list": lambda T: T.is_same_size(T.ones(2, 3), [2, 3]),
    "is_nonzero_empty": lambda T: T.tensor([]).is_nonzero(),
    "is_nonzero_many": lambda T: T.tensor([1, 2]).is_nonzero(),
    "is_nonzero_number": lambda T: T.is_nonzero(3),
    "can_cast_number": lambda T: T.can_cast(1, T.int32),
    "can_cast_string": lambda T: T.can_cast(T.float32, "int"),
    "fill_vector": lambda T: T.fill(T.tensor([1, 2]), T.tensor([1., 2])),
    "fill_complex_into_int": lambda T: T.fill(T.tensor([1, 2]), 2 + 1j),
    "fill_string": lambda T: T.fill(T.tensor([1., 2]), "a"),
    "trapz_number_x": lambda T: T.trapz(T.tensor(_Y), 2.),
    "trapz_x_and_dx": lambda T: T.trapz(T.tensor(_Y), T.tensor([0., 1, 3, 4]), dx=1.),
    "trapz_complex_dx": lambda T: T.trapz(T.tensor(_Y), dx=1j),
    "trapz_short_x": lambda T: T.trapz(T.tensor(_Y), T.tensor([1., 2])),
    "trapz_bool": lambda T: T.trapz(T.tensor([True, False])),
    "trapz_zero_dim": lambda T: T.trapz(T.tensor(3.)),
    "trapezoid_number_x": lambda T: T.trapezoid(T.tensor(_Y), 2),
    "trapezoid_complex_dx": lambda T: T.trapezoid(T.tensor(_Y), dx=1j),
    "trapezoid_bool_x": lambda T: T.trapezoid(T.tensor(_Y), T.tensor([True, False, True, True])),
    "trapezoid_zero_dim_x": lambda T: T.trapezoid(T.tensor(3.), T.tensor([1.])),
    "trapezoid_zero_dim_dim2": lambda T: T.trapezoid(T.tensor(3.), dim=2),
    "trapezoid_zero_dim_x_dim2": lambda T: T.trapezoid(T.tensor(3.), T.tensor([1.]), dim=2),
    "trapezoid_zero_dim_x_given": lambda T: T.trapezoid(T.tensor(_Y), T.tensor(1.)),
    "trapezoid_x_fewer_dims": lambda T: T.trapezoid(T.arange(24.).reshape(2, 3, 4),
                                                    T.tensor([[0., 1, 3], [1, 2, 5]]), dim=1),
    "cumulative_trapezoid_short_x": lambda T: T.cumulative_trapezoid(
        T.tensor(_Y), T.tensor([0., 1, 3])),
    "cumulative_trapezoid_number_x": lambda T: T.cumulative_trapezoid(T.tensor(_Y), 2.),
    "cumulative_trapezoid_x_and_dx": lambda T: T.cumulative_trapezoid(
        T.tensor(_Y), T.tensor([0., 1, 3, 4]), dx=1.),
    "cumulative_trapezoid_zero_dim": lambda T: T.cumulative_trapezoid(T.tensor(3.)),
    "cumulative_trapezoid_zero_dim_x": lambda T: T.cumulative_trapezoid(T.tensor(3.),
                                                                        T.tensor([1.])),
    "cumulative_trapezoid_dim": lambda T: T.cumulative_trapezoid(T.tensor(_Y), dim=1),
    "cumulative_trapezoid_bool": lambda T: T.cumulative_trapezoid(T.zeros(0, dtype=T.bool)),
    "cumulative_trapezoid_complex_dx": lambda T: T.cumulative_trapezoid(T.ones(2, 3), dx=1j),
    "cumulative_trapezoid_3d_x": lambda T: T.cumulative_trapezoid(
        T.arange(6.).reshape(2, 3), T.tensor([[[0., 1, 3]]])),
    "cumulative_trapezoid_empty_short_x": lambda T: T.cumulative_trapezoid(
        T.zeros(2, 0, 3), T.zeros(5), dim=1),
    **_fill_cases(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    _same(ERRORS[name])


def test_documented_differences_raise():
    # torch writes int64's lowest value for 2.0**63 (c10 compares in double); wgrad refuses
    with pytest.raises(RuntimeError, match="int64_t without overflow"):
        wgrad.zeros(2, dtype=wgrad.int64).fill_(2.0 ** 63)
    # wgrad has no complex32 (torch's chalf)
    with pytest.raises(NotImplementedError, match="complex32"):
        wgrad.ones(2).chalf()


# ======================================================================================
# gradients: gradcheck, gradgradcheck and the JAX identity
# ======================================================================================

def _t(shape, dtype, lo, hi, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi, shape)
    if dtype == np.complex128:
        a = a + 1j * rng.uniform(lo, hi, shape)
    return wgrad.tensor(a.astype(dtype), requires_grad=True)


def _cumtrapz(y, x=None, dx=1.):
    d = jnp.diff(x) if x is not None else dx
    return jnp.cumsum((y[..., 1:] + y[..., :-1]) * d / 2, -1)


def _frexp_ref(x):
    return x * jnp.exp2(-jax.lax.stop_gradient(jnp.frexp(x)[1]).astype(x.dtype))


W = wgrad
C, R = np.complex128, np.float64
# (id, wgrad fn, JAX fn, input specs (shape, lo, hi), dtypes)
GRADS = [
    ("arccos", W.arccos, jnp.arccos, [((3,), -0.8, 0.8)], (C,)),
    ("arctan2", W.arctan2, jnp.arctan2, [((3,), 0.2, 1), ((3,), 0.2, 1)], (R,)),
    ("hypot", W.hypot, jnp.hypot, [((3,), 0.2, 1), ((3,), -1, -0.2)], (R,)),
    ("subtract", lambda a, b: W.subtract(a, b, alpha=2), lambda a, b: a - 2 * b,
     [((3,), -1, 1)] * 2, (C,)),
    ("divide", W.divide, jnp.divide, [((3,), -1, 1), ((3,), 1, 2)], (C,)),
    ("i0", W.i0, jsp.i0, [((4,), -3, 3)], (R,)),
    ("frexp", lambda x: W.frexp(x).mantissa, _frexp_ref, [((4,), -9, 9)], (R,)),
    ("ldexp", W.ldexp, lambda a, b: a * 2.0 ** b, [((3,), -1, 1), ((3,), -2, 2)], (R, C)),
    ("ldexp_int_exponent", lambda a: W.ldexp(a, W.tensor([3, -2, 0])),
     lambda a: a * jnp.array([8., 0.25, 1.]), [((3,), -1, 1)], (C,)),
    ("nextafter", W.nextafter, lambda a, b: a + 0 * b, [((3,), -1, 1), ((3,), -1, 1)], (R,)),
    ("mvlgamma", lambda x: W.mvlgamma(x, 3), lambda x: jsp.multigammaln(x, 3),
     [((3,), 1.2, 3)], (R,)),
    ("trapz_x", lambda y, x: W.trapz(y, x), lambda y, x: jnp.trapezoid(y, x),
     [((2, 3), -1, 1), ((3,), -1, 1)], (C,)),
    ("cumulative_trapezoid_x", W.cumulative_trapezoid, _cumtrapz,
     [((2, 3), -1, 1), ((3,), -1, 1)], (C,)),
    ("fill_tensor", W.fill, lambda x, v: jnp.broadcast_to(v, x.shape) + 0 * x,
     [((3,), -1, 1), ((), -1, 1)], (C,)),
]


# compositions of recorded ops: their second order is that of the ops (tested with them)
FIRST_ORDER = ("trapz_x", "cumulative_trapezoid_x")


@pytest.mark.parametrize("wfn,jfn,specs,dtype,gradgrad", [
    pytest.param(w, j, s, dt, n not in FIRST_ORDER, id=f"{n}-{'c128' if dt is C else 'f64'}")
    for n, w, j, s, dts in GRADS for dt in dts])
def test_gradcheck_gradgradcheck_and_jax_identity(wfn, jfn, specs, dtype, gradgrad):
    xs = [_t(s, dtype, lo, hi, seed=i) for i, (s, lo, hi) in enumerate(specs)]
    check_op(wfn, xs, jfn, gradgrad=gradgrad, fast_mode=True)


def _grads(fn, *values, dtype="float64", node=True):
    """(result, node name, gradients) of ``fn`` at ``values``, per library (``node``:
    whether to compare the node's name, not for compositions that end another way)."""
    def run(T):
        xs = [T.tensor(v, dtype=getattr(T, dtype), requires_grad=True) for v in values]
        y = fn(T, *xs)
        w = T.arange(1., y.numel() + 1, dtype=T.float64).reshape(tuple(y.shape))
        loss = (y.real * w + y.imag * w * 0.5).sum() if y.is_complex() else (y * w).sum()
        gs = T.autograd.grad(loss, xs, allow_unused=True)
        return (y, np.array(type(y.grad_fn).__name__ if node else ""),
                *(g if g is not None else np.array("none") for g in gs))
    return run


TORCH_GRADS = {
    "arccos": _grads(lambda T, x: T.arccos(x), [0.5, -0.2]),
    "arccos_inplace": _grads(lambda T, x: (x * 1).arccos_(), [0.5, -0.2]),
    "divide_floor": _grads(lambda T, a, b: a.divide(b, rounding_mode="floor"), [3., 2.],
                           [2., 0.7]),
    "divide_trunc_number": _grads(lambda T, a: T.divide(a, 2., rounding_mode="trunc"),
                                  [3., -2.]),
    "subtract_complex": _grads(lambda T, a, b: T.subtract(a, b, alpha=2j), [1 + 1j, 2j],
                               [3 - 1j, 1.], dtype="complex128"),
    "fix": _grads(lambda T, x: x.fix(), [1.5, -2.5]),
    "i0": _grads(lambda T, x: T.i0(x), [0., 1.5, -3.]),
    "i0_inplace": _grads(lambda T, x: (x * 1).i0_(), [0., 1.5, -3.]),
    "i0_double_backward": _grads(lambda T, x: T.autograd.grad(
        T.i0(x).sum(), x, create_graph=True)[0], [0., 1.5, -3.]),
    "frexp": _grads(lambda T, x: T.frexp(x).mantissa, [3., -5., 0.1, 0.]),
    "ldexp": _grads(lambda T, a, b: T.ldexp(a, b), [1.5, -2.], [2., 3.]),
    "ldexp_complex": _grads(lambda T, a, b: T.ldexp(a, b), [1.5 + 1j, -2j], [2. - 1j, 0.5j],
                            dtype="complex128"),
    "ldexp_inplace": _grads(lambda T, a, b: (a * 1).ldexp_(b), [1.5, -2.], [2., 3.]),
    "nextafter": _grads(lambda T, a, b: T.nextafter(a, b), [1., 2.], [2., 1.]),
    "mvlgamma": _grads(lambda T, x: T.mvlgamma(x, 3), [2.5, 3.]),
    "mvlgamma_inplace": _grads(lambda T, x: (x * 1).mvlgamma_(2), [2.5, 3.]),
    "trapz": _grads(lambda T, y, x: T.trapz(y, x), [1., 2., 4.], [0., 1., 3.], node=False),
    "cumulative_trapezoid": _grads(lambda T, y, x: T.cumulative_trapezoid(y, x),
                                   [[1., 2., 4.], [0., 1., -1.]], [0., 1., 3.], node=False),
    "cumulative_trapezoid_dx": _grads(lambda T, y: T.cumulative_trapezoid(y, dx=0.5),
                                      [[1., 2., 4.], [0., 1., -1.]], node=False),
    "fill_number": _grads(lambda T, x: T.fill(x, 2.), [1., 2.]),
    "fill_tensor": _grads(lambda T, x, v: T.fill(x, v), [1., 2.], 3.),
    "fill_inplace_number": _grads(lambda T, x: (x * 1).fill_(2.), [1., 2.]),
    "fill_inplace_tensor": _grads(lambda T, x, v: (x * 1).fill_(v), [1., 2.], 3.),
}


@pytest.mark.parametrize("name", sorted(TORCH_GRADS))
def test_gradients_match_torch(name):
    _same(TORCH_GRADS[name])


# ======================================================================================
# out=, the namespace and the Tensor methods
# ======================================================================================

def _xo(T, rg=False):
    return T.tensor([[0.5, 0.25], [0.75, 0.125]], requires_grad=rg)


def _io(T):
    return T.tensor([[4, 6], [9, 2]])


OUT = {
    "arccos": lambda T, rg, o: T.arccos(_xo(T, rg), out=o),
    "arctan2": lambda T, rg, o: T.arctan2(_xo(T, rg), _xo(T), out=o),
    "divide": lambda T, rg, o: T.divide(_xo(T, rg), 0.3, rounding_mode="floor", out=o),
    "subtract": lambda T, rg, o: T.subtract(_xo(T, rg), 3, alpha=2, out=o),
    "greater": lambda T, rg, o: T.greater(_xo(T, rg), 0.3, out=o),
    "fix": lambda T, rg, o: T.fix(_xo(T, rg) * 3, out=o),
    "gcd": lambda T, rg, o: T.gcd(_io(T), _io(T).flip(0), out=o),
    "bitwise_right_shift": lambda T, rg, o: T.bitwise_right_shift(_io(T), _io(T) % 3, out=o),
    "i0": lambda T, rg, o: T.i0(_xo(T, rg), out=o),
    "frexp": lambda T, rg, o: tuple(T.frexp(_xo(T, rg), out=o)),
    "ldexp": lambda T, rg, o: T.ldexp(_xo(T, rg), _io(T), out=o),
    "nextafter": lambda T, rg, o: T.nextafter(_xo(T, rg), _xo(T) * 2, out=o),
    "mvlgamma": lambda T, rg, o: T.mvlgamma(_xo(T, rg) + 2, 2, out=o),
}


@pytest.mark.parametrize("name", sorted(OUT))
@pytest.mark.parametrize("rg,dtype", [(False, None), (True, None), (False, "int64"),
                                      (False, "bool")])
def test_out_matches_torch(name, rg, dtype):
    # the values written, torch's autograd error, and its rule for an out of another dtype
    # (ldexp's float out is left out: torch 2.13 fails an internal assert there)
    call = OUT[name]

    def run(T):
        with T.no_grad():
            r = call(T, False, None)
        rs = r if isinstance(r, tuple) else (r,)
        outs = tuple(T.empty(0, dtype=getattr(T, dtype) if dtype else t.dtype) for t in rs)
        o = outs if isinstance(r, tuple) else outs[0]
        got = call(T, rg, o)
        return (*outs, all(g is t for g, t in zip(got if isinstance(got, tuple) else (got,),
                                                  outs)))
    _same(run)


def test_namespace_and_methods_follow_torch():
    for name in (*ALIASES, *NEW):
        assert callable(getattr(wgrad, name)), name
        assert (name in wgrad.ops.__all__) == (name != "can_cast"), name
        for n in (name, name + "_"):
            assert hasattr(wgrad.Tensor, n) == hasattr(torch.Tensor, n), n
    for alias, name in ALIASES.items():  # an alias runs its op (its node, its errors)
        x = wgrad.tensor([0.5, 0.25], requires_grad=True)
        if alias not in ("greater", "greater_equal", "less", "less_equal", "not_equal"):
            y = getattr(wgrad, alias)(x, x) if alias in ("arctan2", "divide", "multiply",
                                                         "subtract") else \
                getattr(wgrad, alias)(x + (2 if alias == "arccosh" else 0))
            z = getattr(wgrad, name)(x, x) if alias in ("arctan2", "divide", "multiply",
                                                        "subtract") else \
                getattr(wgrad, name)(x + (2 if alias == "arccosh" else 0))
            assert type(y.grad_fn).__name__ == type(z.grad_fn).__name__, alias


def test_inplace_aliases_keep_torch_derivatives():
    # in-place inverse hyperbolic functions have no derivative in torch; arccos_ has one
    x = wgrad.tensor([0.5, 0.2], dtype=wgrad.float64, requires_grad=True)
    y = (x * 1).arcsinh_()
    assert type(y.grad_fn).__name__ == "AsinhBackward1"
    with pytest.raises(NotImplementedError, match="inplace version of asinh"):
        y.sum().backward()
    y = (x * 1).arccos_()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -1 / np.sqrt(1 - np.array([0.5, 0.2]) ** 2))


def test_nextafter_steps_one_ulp():
    x = wgrad.tensor([1., -2., 0.], dtype=wgrad.float64)
    up = wgrad.nextafter(x, wgrad.full((3,), INF, dtype=wgrad.float64)).numpy()
    np.testing.assert_array_equal(up, np.nextafter(x.numpy(), INF))
