"""The ground floor: input checks, the memory and thread policies, cancellation and numba's
compiled-code cache. Nothing here imports another part of the package."""
