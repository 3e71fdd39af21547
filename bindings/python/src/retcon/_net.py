"""Transports: UDP sockets, in-process networks, your own send/receive, and the simulator."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from . import _capi as c
from ._capi import fn
from .errors import check

SendFunction = Callable[[bytes, bytes], bool]             # (address bytes, datagram) -> sent?
ReceiveFunction = Callable[[], Optional[Tuple[bytes, bytes]]]  # -> (address bytes, datagram) or None


def ip_address(host: str, port: int) -> c.PeerAddress:
    """A UDP address from numeric text ("127.0.0.1", "::1") and a port."""
    out = c.PeerAddress()
    check(fn.ip_address(host.encode(), port, ctypes.byref(out)), "ip_address")
    return out


def peer_address(raw: bytes) -> c.PeerAddress:
    """An address of a user transport: up to 32 bytes of your choosing."""
    if len(raw) > c.PEER_ADDRESS_CAPACITY:
        raise ValueError("an address holds at most %d bytes" % c.PEER_ADDRESS_CAPACITY)
    out = c.PeerAddress()
    out.size = len(raw)
    ctypes.memmove(out.bytes, raw, len(raw))
    return out


def link_profile(**fields: Any) -> c.LinkProfile:
    """A retcon_link_profile with its defaults and the given fields (latency_us, jitter_us, loss,
    duplicate, reorder, bandwidth_bytes_per_s, blackout_period_us, ...)."""
    profile = c.new(c.LinkProfile, fn.link_profile_init)
    known = {name for name, _ in c.LinkProfile._fields_}
    for name, value in fields.items():
        if name not in known or name == "size":
            raise TypeError("unknown link field %r" % name)
        setattr(profile, name, value)
    return profile


class Transport:
    """A transport handle. Close it after every session and simulator using it (the library
    refuses with WrongState before)."""

    def __init__(self, handle: ctypes.c_void_p, keep: Any = None) -> None:
        self._handle = handle
        self._keep = keep  # what this transport borrows (its network, inner transport, callbacks)

    @classmethod
    def udp(cls, host: str = "0.0.0.0", port: int = 0, receive_path: str = "completion_ring") -> "Transport":
        """A non-blocking UDP socket bound to numeric `host` and `port` (0: any free port).
        `receive_path`: "completion_ring" (io_uring where Linux allows it), "batched_calls"
        (recvmmsg) or "single_calls"; a path the system lacks falls back to the next one down
        (see the receive_path property)."""
        if receive_path not in c.UDP_RECEIVE_PATHS:
            raise ValueError("receive_path must be one of %s" % ", ".join(c.UDP_RECEIVE_PATHS))
        handle = ctypes.c_void_p()
        check(fn.udp_transport_open_with_receive_path(host.encode(), port, c.UDP_RECEIVE_PATHS.index(receive_path),
                                                      ctypes.byref(handle)), "udp_transport_open_with_receive_path")
        return cls(handle)

    @property
    def receive_path(self) -> str:
        """UDP sockets only: the receive path that runs ("completion_ring", "batched_calls",
        "single_calls")."""
        out = ctypes.c_uint32()
        check(fn.udp_transport_receive_path(self._handle, ctypes.byref(out)), "udp_transport_receive_path")
        return c.UDP_RECEIVE_PATHS[out.value]

    @classmethod
    def from_callbacks(cls, send: SendFunction, receive: ReceiveFunction) -> "Transport":
        """Your own transport (a relay, Steam, WebRTC...): `send(address, data)` returns whether it
        was sent; `receive()` returns (address, data) or None when nothing waits. Neither may block.
        An exception in either counts as a failed send / a receive error."""
        def on_send(user: Any, addr: Any, addr_len: int, data: Any, length: int) -> int:
            try:
                return 0 if send(ctypes.string_at(addr, addr_len), ctypes.string_at(data, length)) else 1
            except Exception:
                return 1

        def on_receive(user: Any, addr: Any, addr_len: Any, buffer: Any, capacity: int, length: Any) -> int:
            try:
                got = receive()
            except Exception:
                return -1
            if got is None:
                return 0
            address, data = bytes(got[0]), bytes(got[1])
            if len(address) > addr_len.contents.value or len(data) > capacity:
                return -1
            ctypes.memmove(addr, address, len(address))
            addr_len.contents.value = len(address)
            ctypes.memmove(buffer, data, len(data))
            length.contents.value = len(data)
            return 1

        callbacks = c.new(c.TransportCallbacks, fn.transport_callbacks_init)
        keep = (c.TransportSend(on_send), c.TransportReceive(on_receive))
        callbacks.send, callbacks.receive = keep
        handle = ctypes.c_void_p()
        check(fn.callback_transport_create(ctypes.byref(callbacks), ctypes.byref(handle)), "callback_transport_create")
        return cls(handle, keep=keep)

    def simulated(self, seed: int, outgoing: Optional[c.LinkProfile] = None, incoming: Optional[c.LinkProfile] = None,
                  **outgoing_fields: Any) -> "Transport":
        """A network simulator around this transport (latency, jitter, loss, duplicates, reordering,
        bandwidth, blackouts) from its own seeded generator. Fields given by name shape `outgoing`."""
        handle = ctypes.c_void_p()
        check(fn.network_simulator_create(self._handle, seed, ctypes.byref(handle)), "network_simulator_create")
        sim = Transport(handle, keep=self)
        if outgoing is None and outgoing_fields:
            outgoing = link_profile(**outgoing_fields)
        check(fn.network_simulator_set_links(handle, ctypes.byref(outgoing) if outgoing is not None else None,
                                             ctypes.byref(incoming) if incoming is not None else None),
              "network_simulator_set_links")
        return sim

    def set_time(self, now_us: int) -> None:
        """Simulators only: advance the clock (never backwards) and deliver what is due."""
        check(fn.network_simulator_set_time(self._handle, now_us), "network_simulator_set_time")

    def set_links(self, outgoing: Optional[c.LinkProfile] = None, incoming: Optional[c.LinkProfile] = None) -> None:
        """Simulators only: new conditions for either direction (None keeps one as it is; the
        explicit blackouts stay)."""
        check(fn.network_simulator_set_links(self._handle, ctypes.byref(outgoing) if outgoing is not None else None,
                                             ctypes.byref(incoming) if incoming is not None else None),
              "network_simulator_set_links")

    def set_blackouts(self, windows: Sequence[Tuple[int, int]], outgoing: bool = True, incoming: bool = False) -> None:
        """Simulators only: silences at explicit times, [(start_us, end_us), ...], replacing the
        chosen directions' list (an empty one clears it). At most SIMULATOR_MAX_BLACKOUTS."""
        directions = (c.LINK_OUTGOING if outgoing else 0) | (c.LINK_INCOMING if incoming else 0)
        array = (c.BlackoutWindow * max(1, len(windows)))()
        for i, (start, end) in enumerate(windows):
            array[i].start_us, array[i].end_us = start, end
        check(fn.network_simulator_set_blackouts(self._handle, directions, array, len(windows)),
              "network_simulator_set_blackouts")

    @property
    def simulator_limits(self) -> c.SimulatorLimits:
        """Simulators only: what one poll reads at most, what a direction holds, the time budget."""
        out = c.new(c.SimulatorLimits, fn.simulator_limits_init)
        check(fn.network_simulator_get_limits(self._handle, ctypes.byref(out)), "network_simulator_get_limits")
        return out

    def set_simulator_limits(self, receive_budget: Optional[int] = None, capacity: Optional[int] = None,
                             receive_time_budget_us: Optional[int] = None) -> None:
        """Simulators only: change the given limits, keep the others (zero counts are taken as 1)."""
        limits = self.simulator_limits
        if receive_budget is not None:
            limits.receive_budget = receive_budget
        if capacity is not None:
            limits.capacity = capacity
        if receive_time_budget_us is not None:
            limits.receive_time_budget_us = receive_time_budget_us
        check(fn.network_simulator_set_limits(self._handle, ctypes.byref(limits)), "network_simulator_set_limits")

    def simulator_stats(self) -> Tuple[Dict[str, int], Dict[str, int]]:
        """Simulators only: ({outgoing counters}, {incoming counters}) since creation."""
        out = c.new(c.SimulatorStats, fn.simulator_stats_init)
        inc = c.new(c.SimulatorStats, fn.simulator_stats_init)
        check(fn.network_simulator_get_stats(self._handle, ctypes.byref(out), ctypes.byref(inc)),
              "network_simulator_get_stats")
        return ({n: getattr(out, n) for n in c.SIMULATOR_STAT_COUNTERS},
                {n: getattr(inc, n) for n in c.SIMULATOR_STAT_COUNTERS})

    def simulator_in_flight(self) -> Tuple[int, int]:
        """Simulators only: (datagrams waiting for their delivery time, bytes of buffer held)."""
        datagrams, buffer_bytes = c.U64(), c.U64()
        check(fn.network_simulator_in_flight(self._handle, ctypes.byref(datagrams), ctypes.byref(buffer_bytes)),
              "network_simulator_in_flight")
        return datagrams.value, buffer_bytes.value

    def set_receive_budget(self, datagrams: Optional[int] = None, microseconds: Optional[int] = None) -> None:
        """UDP sockets only: one poll reads at most `datagrams` (>= 1) and stops after
        `microseconds` (0: no time budget); the rest waits for the next poll."""
        if datagrams is not None:
            check(fn.udp_transport_set_receive_budget(self._handle, datagrams), "udp_transport_set_receive_budget")
        if microseconds is not None:
            check(fn.udp_transport_set_receive_time_budget(self._handle, microseconds),
                  "udp_transport_set_receive_time_budget")

    def udp_stats(self) -> Dict[str, int]:
        """UDP sockets only: send_errors, receive_errors, receive_budget_stops, system_calls."""
        out = c.new(c.UdpStats, fn.udp_stats_init)
        check(fn.udp_transport_get_stats(self._handle, ctypes.byref(out)), "udp_transport_get_stats")
        return {n: getattr(out, n) for n in c.UDP_STAT_COUNTERS}

    @property
    def address(self) -> c.PeerAddress:
        """A UDP socket's or in-memory endpoint's own address (NotFound for the others)."""
        out = c.PeerAddress()
        check(fn.transport_address(self._handle, ctypes.byref(out)), "transport_address")
        return out

    def close(self) -> None:
        if self._handle:
            check(fn.transport_destroy(self._handle), "transport_destroy")
            self._handle = ctypes.c_void_p()

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            fn.transport_destroy(self._handle)


class MemoryNetwork:
    """Endpoints that reach each other inside this process (tests, local play)."""

    def __init__(self) -> None:
        self._handle = ctypes.c_void_p()
        check(fn.memory_network_create(ctypes.byref(self._handle)), "memory_network_create")

    @property
    def dropped_unknown_address(self) -> int:
        """Datagrams sent to an address none of this network's endpoints has."""
        out = c.U64()
        check(fn.memory_network_dropped_unknown_address(self._handle, ctypes.byref(out)),
              "memory_network_dropped_unknown_address")
        return out.value

    def endpoint(self) -> Transport:
        handle = ctypes.c_void_p()
        check(fn.memory_network_add_endpoint(self._handle, ctypes.byref(handle)), "memory_network_add_endpoint")
        return Transport(handle, keep=self)

    def close(self) -> None:
        if self._handle:
            check(fn.memory_network_destroy(self._handle), "memory_network_destroy")
            self._handle = ctypes.c_void_p()

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            fn.memory_network_destroy(self._handle)
