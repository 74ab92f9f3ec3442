"""`jax.monitoring`: listeners for events, durations and scalars that a program records.

    yax.monitoring.register_event_listener(lambda event, **kw: seen.append(event))
    yax.monitoring.record_event("/my_app/checkpoint_saved")

Libraries record their own events here (yax records none of its own yet); every listener
registered for a kind of record is called, in registration order, with the record's name, its
value(s) and the keyword arguments given to `record_*`.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["clear_event_listeners", "record_event", "record_event_duration_secs",
           "record_event_time_span", "record_scalar", "register_event_duration_secs_listener",
           "register_event_listener", "register_event_time_span_listener",
           "register_scalar_listener", "unregister_event_duration_listener",
           "unregister_event_listener", "unregister_event_time_span_listener",
           "unregister_scalar_listener"]

_event: list[Callable] = []
_duration: list[Callable] = []
_time_span: list[Callable] = []
_scalar: list[Callable] = []


def record_event(event: str, **kwargs) -> None:
    for listener in list(_event):
        listener(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs) -> None:
    for listener in list(_duration):
        listener(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs) -> None:
    for listener in list(_time_span):
        listener(event, start_time, end_time, **kwargs)


def record_scalar(key: str, value: float | int, **kwargs) -> None:
    for listener in list(_scalar):
        listener(key, value, **kwargs)


def register_event_listener(callback: Callable) -> None:
    _event.append(callback)


def register_event_duration_secs_listener(callback: Callable) -> None:
    _duration.append(callback)


def register_event_time_span_listener(callback: Callable) -> None:
    _time_span.append(callback)


def register_scalar_listener(callback: Callable) -> None:
    _scalar.append(callback)


def _unregister(listeners: list, callback: Callable, what: str) -> None:
    if callback not in listeners:
        raise AssertionError(f"{callback!r} is not a registered {what} listener")
    listeners.remove(callback)


def unregister_event_listener(callback: Callable) -> None:
    _unregister(_event, callback, "event")


def unregister_event_duration_listener(callback: Callable) -> None:
    _unregister(_duration, callback, "event duration")


def unregister_event_time_span_listener(callback: Callable) -> None:
    _unregister(_time_span, callback, "event time span")


def unregister_scalar_listener(callback: Callable) -> None:
    _unregister(_scalar, callback, "scalar")


def clear_event_listeners() -> None:
    """Remove every listener of every kind."""
    for listeners in (_event, _duration, _time_span, _scalar):
        listeners.clear()
