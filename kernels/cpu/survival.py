"""Each row's AFT loss (``survival_math.aft_loss``) for the ``aft-nloglik`` metric. A host
kernel: the metrics are computed on the host on every backend (no CUDA twin, by design),
with ``kernels.elementary``'s exp and log, so a score is the same bits everywhere."""
import numpy as np

from ..elementary import cpu as _elementary
from ..elementary import product
from ..jit import helper, kernel
from ..survival_math import make_survival_math

_aft_loss = make_survival_math(helper, helper(product), _elementary).aft_loss


@kernel
def aft_loss_into(lower, upper, margin, objective_params, out):
    """``out[i]`` = -log of row ``i``'s AFT likelihood.

    lower, upper : float64 (n,)          # IN  each row's interval (upper +inf: right-censored)
    margin : float64 (n,)                # IN
    objective_params : float64 (2,)      # IN  (distribution, scale), as layout.AFT's
    out : float64 (n,)                   # OUT
    """
    dist, sigma = np.int64(objective_params[0]), objective_params[1]
    for i in range(margin.shape[0]):
        out[i] = _aft_loss(dist, sigma, lower[i], upper[i], margin[i])
