"""The other seats of an end-to-end test: guest players over the public HTTP API who each
send a random command of their view's ``legal`` list on their turn, as a bot would, but
with moves the test chooses (passing in the auction, say); the e2e stack runs no bot
worker (docs/bots.md, "The bot worker").

Run in a thread beside the client under test; ``python -m tests.e2e.others URL GAME N [--pass]``
seats N such players by quick play, for a person trying the client by hand.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from typing import Any

import httpx


def a_legal_command(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    command = dict(rng.choice(view["legal"]))
    if command["type"] == "discard" and "count" in command:
        command["cards"] = rng.sample(command.pop("from"), command.pop("count"))
    return command


class Others:
    def __init__(self, url: str, names: list[str], seed: int = 0, *, pass_first: bool = False) -> None:
        self.http = httpx.Client(base_url=url, timeout=15)
        self.rng = random.Random(seed)
        self.pass_first = pass_first  # pass whenever a pass is legal (the auction)
        self.players: list[dict[str, str]] = []
        for name in names:
            made = self.http.post("/api/v1/players", json={"name": name})
            made.raise_for_status()
            self.players.append(made.json())
        self.seats: dict[int, dict[str, str]] = {}  # seat → player, once seated
        self.sent = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []

    def headers(self, player: dict[str, str]) -> dict[str, str]:
        return {"Authorization": f"Bearer {player['token']}"}

    def join(self, table: str) -> None:
        for player in self.players:
            joined = self.http.post(f"/api/v1/tables/{table}/join", json={}, headers=self.headers(player))
            joined.raise_for_status()
            self.seats[int(joined.json()["seat"])] = player

    def quickplay(self, game: str, wait_seconds: float) -> str:
        """Every player asks for quick play at once; the table they were seated at."""
        found: dict[int, tuple[str, int]] = {}

        def ask(i: int, player: dict[str, str]) -> None:
            seated = self.http.post("/api/v1/quickplay", json={"game": game, "wait_seconds": wait_seconds},
                                    headers=self.headers(player))
            seated.raise_for_status()
            found[i] = (seated.json()["table"], int(seated.json()["seat"]))

        threads = [threading.Thread(target=ask, args=(i, p)) for i, p in enumerate(self.players)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for i, (_, seat) in found.items():
            self.seats[seat] = self.players[i]
        return found[0][0]

    def play(self, table: str) -> None:
        """Play every seat held, in a background thread, until ``stop``."""
        self._thread = threading.Thread(target=self._loop, args=(table,), daemon=True)
        self._thread.start()

    def _loop(self, table: str) -> None:
        while not self._stop.is_set():
            try:
                if not self.step(table):
                    time.sleep(0.05)
            except httpx.HTTPError as error:  # a gateway stopping under us at the end of a test
                self.errors.append(str(error))
                time.sleep(0.2)

    def step(self, table: str) -> bool:
        """One command of the seat to act, if it is one of ours; whether one was sent."""
        public = self.http.get(f"/api/v1/tables/{table}/view").json()
        seat = public.get("to_act")
        if public.get("status") == "closed" or seat not in self.seats:
            return False
        player = self.seats[seat]
        view = self.http.get(f"/api/v1/tables/{table}/view", headers=self.headers(player)).json()
        if view["version"] < public["version"] or not view["legal"]:
            return False  # the seat's view is a step behind the public one
        answer = self.http.post(f"/api/v1/tables/{table}/commands",
                                json={"id": f"o-{table}-{view['version']}-{seat}",
                                      "command": self.choose(view)},
                                headers=self.headers(player))
        if answer.status_code != 200:
            self.errors.append(answer.text)
            return False
        self.sent += 1
        return True

    def choose(self, view: dict[str, Any]) -> dict[str, Any]:
        # a legal entry carries its label (docs/api.md, "Games, labels and languages"): compare the type
        if self.pass_first and any(c.get("type") == "pass" for c in view["legal"]):
            return {"type": "pass"}
        return a_legal_command(view, self.rng)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.http.close()


if __name__ == "__main__":
    url, game, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    others = Others(url, [f"Other {i}" for i in range(1, count + 1)], pass_first="--pass" in sys.argv)
    table = others.quickplay(game, wait_seconds=30)
    print(f"seated at {table}: {sorted(others.seats)}", flush=True)
    others.play(table)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        others.stop()
