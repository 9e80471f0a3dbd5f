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
from dataclasses import dataclass

__all__ = ["JobView", "ResourceProvider"]


@dataclass(frozen=True, slots=True)
class JobView:
    """What a provider is shown of one running job on this host, to measure its use
    (:meth:`ResourceProvider.job_usage`): its processes as its control group holds them, and the
    devices the worker gave it (GPU indexes)."""

    jobid: int
    pids: tuple[int, ...]
    devices: tuple[str, ...] = ()


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

    def job_usage(self, job: JobView) -> int | None:
        """How much of this resource ``job`` uses now, a whole number in the resource's own unit;
        None (the default) when this provider cannot tell one job's use from another's.

        Optional: the worker asks at every usage report, for every job it runs, so it must be
        cheap. What it answers goes into the job's usage ticks under the resource's name, and
        ``xce drift`` compares it with what jobs declared; a resource no provider measures per job
        is listed as unmeasured there rather than passed over.
        """
        return None

    #: True when :meth:`enforce_limit` can hold a job to ``--limit NAME=N`` for this resource. The
    #: worker tells the controller at registration, and a limit on a resource no registered worker
    #: can enforce is refused at submission: a cap that is shown but not kept is worse than none.
    enforces_limits: bool = False

    def enforce_limit(self, job: JobView, amount: int) -> None:
        """Hold ``job`` to at most ``amount`` of this resource; only asked when ``enforces_limits``.

        Called once per job on each of its hosts, before its first process exists (``job.pids`` is
        empty; key what you do by ``job.jobid``). Raise to refuse the start: the job fails to start
        with your message rather than run uncapped.
        """
        raise NotImplementedError(f"{type(self).__qualname__} does not enforce limits")

    def __repr__(self) -> str:
        try:
            name = self.resource_name
        except Exception:  # a repr must never be the thing that fails
            name = "?"
        return f"<{type(self).__qualname__} {name}>"
