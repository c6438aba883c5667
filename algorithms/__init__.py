"""attnio's algorithms: the two-level memory machine and the attention schedules that run on it.

Importing the package registers the built-in algorithms, forward and backward, in
:data:`attnio.algorithms.registry.REGISTRY`.
"""

from attnio.algorithms import builtin as _builtin  # noqa: F401  (fills the registry)
