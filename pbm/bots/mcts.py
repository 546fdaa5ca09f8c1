"""Monte Carlo tree search (UCT) with proven values (MCTS-Solver).

Each iteration walks down the tree by UCB1, adds one node, plays the game out from it
(guided by the game's tactics, cut off and judged where the game says so) and adds the
result to every node on the path. A node whose value is certain (the game ended there, a
child wins for the player to move, or every child is decided) is marked proven, and
proofs climb the tree: a root proven lost is what lets the bot resign, and a proven win
is played without further thought.

Values are the score of player 0 (challenge order); each node knows its player to move
and reads its children's values from that player's side. The tree is keyed by moves and
holds the states, so a move is applied once per node.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from pbm.bots.tactics import DRAW, LOSS, WIN, Clock, Tactics, flip
from pbm.games.base import Move, State

# The exploration constant of UCB1 for rewards between 0 and 1.
EXPLORATION = 0.8


class Node:
    __slots__ = (
        "children",
        "draws",
        "move",
        "player",
        "proven",
        "state",
        "total",
        "untried",
        "visits",
    )

    def __init__(self, state: State, move: Move, player: int | None) -> None:
        self.state = state
        self.move = move
        self.player = player  # to move here; None when the game is over
        self.children: list[Node] = []
        self.untried: list[Move] = []
        self.visits = 0
        self.total = 0.0  # sum of player 0's results through this node
        self.draws = 0  # results that were drawn games
        self.proven: float | None = None  # the exact value for player 0, once known


@dataclass(frozen=True, slots=True)
class ChildStat:
    """What the search found about one move at the root."""

    move: Move
    visits: int
    value: float  # mean result for the player to move at the root
    draws: int
    proven: float | None  # the exact value for that player, if known


class Search:
    """One search tree over a position with perfect information."""

    def __init__(
        self,
        tactics: Tactics,
        state: State,
        moves: Sequence[Move],
        rng: random.Random,
        *,
        guided: bool,
        tree_tactics: bool,
    ) -> None:
        self.tactics = tactics
        self.game = tactics.game
        self.rng = rng
        self.guided = guided
        self.tree_tactics = tree_tactics and tactics.tree_tactics
        self.root = Node(state, None, tactics.player(state))
        self.root.untried = tactics.expansion_order(state, list(moves), rng)
        self.iterations = 0

    # -- the loop ----------------------------------------------------------------------
    def run(self, clock: Clock, iterations: int | None) -> int:
        """Search until the clock expires, `iterations` are done or the root is proven;
        returns the number of iterations made by this call."""
        done = 0
        root = self.root
        while root.proven is None and (iterations is None or done < iterations):
            if clock.expired():
                break
            self._iterate()
            done += 1
        self.iterations += done
        return done

    def _iterate(self) -> None:
        # The path from the root, kept here rather than as parent links: a tree without
        # cycles is freed as soon as the search is dropped, with no collector pauses.
        node = self.root
        path = [node]
        while node.proven is None and not node.untried and node.children:
            node = self._select(node)
            path.append(node)
        if node.proven is None and node.untried:
            move = node.untried.pop()
            child = self._node(self.game.apply(node.state, move), move)
            node.children.append(child)
            path.append(child)
            node = child
            if child.proven is not None:
                self._settle(path)
        drawn = False
        if node.proven is not None:
            value = node.proven
            drawn = value == DRAW
        else:
            value, drawn = self._playout(node.state)
        for step in path:
            step.visits += 1
            step.total += value
            step.draws += drawn

    def _node(self, state: State, move: Move) -> Node:
        tactics = self.tactics
        player = tactics.player(state)
        node = Node(state, move, player)
        if player is None:
            node.proven = tactics.result(state)
            return node
        moves = self.game.legal_moves(state)
        if self.tree_tactics:
            moves, value = tactics.tree_moves(state, moves)
            if value is not None:
                node.proven = flip(value, player)
                return node
        # Expanded from the end of the list: the game's most promising moves last.
        node.untried = tactics.expansion_order(state, moves, self.rng)
        return node

    def _select(self, node: Node) -> Node:
        player = node.player or 0
        log_n = math.log(node.visits)
        best = node.children[0]
        best_score = -math.inf
        for child in node.children:
            if child.proven is not None:
                score = flip(child.proven, player)
            else:
                mean = child.total / child.visits
                score = flip(mean, player) + EXPLORATION * math.sqrt(log_n / child.visits)
            if score > best_score:
                best, best_score = child, score
        return best

    def _settle(self, path: list[Node]) -> None:
        """The last node of `path` was proven: prove its ancestors where it follows."""
        for node in reversed(path[:-1]):
            if node.proven is not None:
                return
            player = node.player or 0
            best_for_player = flip(WIN, player)
            value: float | None = None
            if any(c.proven == best_for_player for c in node.children):
                value = best_for_player
            elif not node.untried and all(c.proven is not None for c in node.children):
                values = [flip(c.proven or 0.0, player) for c in node.children]
                value = flip(max(values), player)
            if value is None:
                return
            node.proven = value

    def _playout(self, state: State) -> tuple[float, bool]:
        tactics, game, rng = self.tactics, self.game, self.rng
        cut = tactics.playout_depth
        pick = tactics.playout_move if self.guided else None
        depth = 0
        while game.to_move(state) is not None:
            if cut is not None and depth >= cut:
                return tactics.evaluate(state), False
            move = pick(state, rng) if pick is not None else rng.choice(game.legal_moves(state))
            state = game.apply(state, move)
            depth += 1
        value = tactics.result(state)
        return value, value == DRAW

    # -- results -------------------------------------------------------------------------
    def stats(self) -> list[ChildStat]:
        """Per root move, seen by the player to move at the root."""
        player = self.root.player or 0
        found = []
        for child in self.root.children:
            mean = child.total / child.visits if child.visits else DRAW
            proven = None if child.proven is None else flip(child.proven, player)
            found.append(
                ChildStat(child.move, child.visits, flip(mean, player), child.draws, proven)
            )
        return found

    def proven(self) -> float | None:
        """The root's exact value for its player to move, if the search proved it."""
        if self.root.proven is None:
            return None
        return flip(self.root.proven, self.root.player or 0)


def best_child(stats: Sequence[ChildStat]) -> ChildStat:
    """The move to play: a proven win, else the most visited move that is not proven
    lost (ties: the better mean), else the best of the lost ones."""
    wins = [s for s in stats if s.proven == WIN]
    if wins:
        return wins[0]
    alive = [s for s in stats if s.proven != LOSS] or list(stats)
    return max(alive, key=lambda s: (s.visits, s.value))
