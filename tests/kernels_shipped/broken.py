"""A kernel module that raises on import (bad input for attnio kernel)."""

raise RuntimeError("this kernel module cannot be imported")
