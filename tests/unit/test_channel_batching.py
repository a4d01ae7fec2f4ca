"""The hook's end of the event channel sends step events together (one send per event cost a
small job ~0.1 ms a step): every line still arrives, in order; any other event goes at once with
the steps before it; steps alone go within the batch time; ``drain`` sends what waits."""

from __future__ import annotations

import json
import threading

from probecast.core.agent.channel import STEP_LINES, EventClient, EventServer


class Received:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def on_line(self, _cid: int, line: str) -> None:
        with self.changed:
            self.lines.append(line)
            self.changed.notify_all()

    def wait_for(self, n: int) -> list[str]:
        with self.changed:  # the deadline only ends a hung test; the order is what is asserted
            self.changed.wait_for(lambda: len(self.lines) >= n, timeout=60)
            return list(self.lines)


def line(ev: str, i: int) -> str:
    return json.dumps({"ev": ev, "t": i, "step": i}, separators=(",", ":")) + "\n"


def test_every_line_arrives_in_order_and_other_events_take_the_steps_with_them() -> None:
    got = Received()
    server = EventServer(got.on_line)
    try:
        client = EventClient(server.path, lambda cmd: None)
        sent = [line("step", i) for i in range(5)] + [line("done", 5)]
        for text in sent:
            client.write(text)
        assert got.wait_for(6) == [s.strip() for s in sent]
        steps = [line("step", i) for i in range(6, 9)]
        for text in steps:  # steps alone: the sender sends them within the batch time
            client.write(text)
        assert got.wait_for(9)[6:] == [s.strip() for s in steps]
        many = [line("step", i) for i in range(9, 9 + STEP_LINES + 3)]
        for text in many:
            client.write(text)
        client.drain()
        assert got.wait_for(9 + len(many))[9:] == [s.strip() for s in many]
        client.close()
    finally:
        server.close()


def test_a_steps_numbers_wait_and_go_as_its_line_in_order_with_every_other_line() -> None:
    """A plain step's numbers (EventClient.step) are made into its line by whoever sends them -
    the sender thread, another event, drain - never out of order with the lines around them."""
    from probecast.core.agent.channel import step_line

    got = Received()
    server = EventServer(got.on_line)
    try:
        client = EventClient(server.path, lambda cmd: None)
        expected: list[str] = []
        for i in range(3 * STEP_LINES):
            if i % 97 == 5:  # another event: goes now, the waiting steps before it
                client.write(line("done", i))
                expected.append(line("done", i).strip())
            elif i % 31 == 7:  # a step with another field: its line made by the Emitter
                client.write(line("step", i))
                expected.append(line("step", i).strip())
            else:
                client.step(i + 0.1234567, 0.0012345678, 0, i)
                expected.append(step_line((i + 0.1234567, 0.0012345678, 0, i)).decode().strip())
        assert got.wait_for(len(expected)) == expected  # the sender sent the last ones
        assert json.loads(expected[0]) == {"ev": "step", "t": 0.123457, "dt": 0.001235,
                                           "epoch": 0, "step": 0}
        client.close()
    finally:
        server.close()


def test_drain_waits_for_every_line_a_process_sent_before_it_exited() -> None:
    """The launcher writes `end` once the program exits; the program's last lines (its steps,
    `done`) were sent as it exited and may not be read yet - on a loaded host a probe of 5 steps
    logged none. ``drain`` returns once every connection is read to its end."""
    got: list[str] = []

    def slow(_cid: int, text: str) -> None:  # a reader that runs late (a loaded host)
        import time

        time.sleep(0.01)
        got.append(text)

    server = EventServer(slow)
    try:
        client = EventClient(server.path, lambda cmd: None)
        sent = [line("step", i) for i in range(40)] + [line("done", 40)]
        for text in sent:
            client.write(text)
        client.drain()
        client.close()  # the process exits: its end of the connection closes
        client._sock.close()
        assert server.drain(timeout=30)
        assert got == [s.strip() for s in sent]  # every line handed on when drain returns
    finally:
        server.close()


def test_drain_gives_up_on_a_connection_still_open() -> None:
    """A process that outlives the program (a child holding its connection) delays the `end`
    by the timeout at most."""
    server = EventServer(lambda cid, text: None)
    try:
        client = EventClient(server.path, lambda cmd: None)
        client.write(line("done", 0))
        import time

        time.sleep(0.2)  # accepted
        assert server.drain(timeout=0.3) is False
        client.close()
    finally:
        server.close()
