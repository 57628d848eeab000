"""wgrad.optim: torch.optim's optimizers and learning-rate schedulers on wgrad Tensors.

Every first-order step is one XLA computation per param group (NOTE [One dispatch per
step]); complex parameters follow torch exactly (NOTE [Complex parameters in optim]).
"""
from . import lr_scheduler, swa_utils
from .adafactor import Adafactor
from .adagrad import Adadelta, Adagrad, RMSprop
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .lbfgs import LBFGS
from .muon import Muon
from .optimizer import (Optimizer, register_optimizer_step_post_hook,
                        register_optimizer_step_pre_hook)
from .sgd import ASGD, SGD, Rprop
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad",
           "Adadelta", "RMSprop", "Rprop", "ASGD", "LBFGS", "lr_scheduler", "swa_utils",
           "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "Adafactor", "Muon", "SparseAdam"]
