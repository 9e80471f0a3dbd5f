"""The contract between a worker and whatever measures one of its resources.

A node advertises only what something on it has *measured*.  An operator's claim ("this box
has 8 GPUs") is exactly what drifts out of date when a card dies or a container is given
fewer CPUs, and the scheduler would route work to capacity that is not there; a provider
that measures cannot drift that way.

``is_available()`` and ``capacity() == 0`` are different statements on purpose.  ``False``
means "this could not be measured here" and hides the resource, so the scheduler never
places work that needs it on this node; ``0`` means "measured, and there is none".  A
provider that guesses a number when it could not measure routes work confidently to a
machine that cannot run it, and the failure shows up an hour later somewhere else.
"""

from __future__ import annotations

import abc

__all__ = ["ResourceProvider"]


class ResourceProvider(abc.ABC):
    """Subclass this (or satisfy it by duck typing) to advertise a resource.

    ``resource_name`` may be a plain class attribute; it is declared as an abstract property
    only so that forgetting it fails at instantiation rather than at registration.  Measure
    once (at construction or lazily, then cache): the manager may ask many times, and a
    number that changes between two questions in one advertisement is not an account.
    """

    @property
    @abc.abstractmethod
    def resource_name(self) -> str:
        """``DOMAIN/NAME``; checked against the naming rules when the provider registers."""

    @abc.abstractmethod
    def capacity(self) -> int:
        """The measured amount, a whole non-negative number in the resource's own unit.

        Only asked when ``is_available()`` is True, so it need not invent a value otherwise.
        """

    @abc.abstractmethod
    def is_available(self) -> bool:
        """False when the measurement could not be made; the resource is then not advertised."""

    def __repr__(self) -> str:
        try:
            name = self.resource_name
        except Exception:  # a repr must never be the thing that fails
            name = "?"
        return f"<{type(self).__qualname__} {name}>"
