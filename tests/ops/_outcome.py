"""What a call does in wgrad and in torch, in one comparable form (the torch-comparison
tables of tests/ops)."""
import warnings


def outcome(T, fn):
    """``fn(T)`` with warnings silenced: its results as a list, or ``(exception type name,
    message)`` of what it raised (torch's ``_LinAlgError`` named as wgrad's
    ``LinAlgError``, without torch's "Triggered internally" suffix)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(T)
    except Exception as e:  # noqa: BLE001  (the exception is the value compared)
        name = type(e).__name__
        return ("LinAlgError" if name == "_LinAlgError" else name,
                str(e).split(" (Triggered internally at ")[0])
    return list(r) if isinstance(r, (tuple, list)) else [r]
