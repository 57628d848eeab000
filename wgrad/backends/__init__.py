"""``wgrad.backends``: torch's backend flags that change results (``cuda.matmul.allow_tf32``,
``cudnn.allow_tf32``); NOTE [Float32 precision] in wgrad/_precision.py."""
from . import cuda, cudnn

__all__ = ["cuda", "cudnn"]
