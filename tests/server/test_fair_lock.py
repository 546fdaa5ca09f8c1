"""pbm.fair_lock: the daemon's writers get the lock in the order they asked for it."""

from __future__ import annotations

import threading
import time

from pbm.fair_lock import FairLock


def test_a_release_hands_the_lock_to_the_waiter_before_the_holder_takes_it_again() -> None:
    lock = FairLock()
    order: list[str] = []
    asked = threading.Event()

    def waiter() -> None:
        asked.set()
        with lock:
            order.append("waiter")

    with lock:
        thread = threading.Thread(target=waiter)
        thread.start()
        asked.wait(5)
        deadline = time.monotonic() + 5
        while not lock.waiting and time.monotonic() < deadline:  # queued yet?
            time.sleep(0.001)
        order.append("holder")
    # the holder asks again at once, as the processor does for its next message
    with lock:
        order.append("holder again")
    thread.join(5)
    assert order == ["holder", "waiter", "holder again"]


def test_waiters_are_served_first_come_first_served_and_never_together() -> None:
    lock = FairLock()
    served: list[int] = []
    inside = 0
    overlaps = 0

    def worker(n: int) -> None:
        nonlocal inside, overlaps
        with lock:
            inside += 1
            overlaps += inside > 1
            served.append(n)
            time.sleep(0.001)
            inside -= 1

    threads = []
    with lock:
        for n in range(8):
            thread = threading.Thread(target=worker, args=(n,))
            thread.start()
            threads.append(thread)
            deadline = time.monotonic() + 5
            while lock.waiting < n + 1 and time.monotonic() < deadline:
                time.sleep(0.001)
    for thread in threads:
        thread.join(5)
    assert served == list(range(8))
    assert overlaps == 0
    with lock:  # free again after the last waiter
        pass
