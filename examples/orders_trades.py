"""Seed 002's ORDERS/TRADES example, live: a union of two named streams and a windowed count
per ticker, printing when each result becomes available (run: python examples/orders_trades.py).

Rows only leave the union once both streams are bounded past them, and the windowed count at an
instant is final only when the bound passes that instant: bounds let results out sooner but
never change them (the last line checks the live results against the batch algebra).
"""

import sira
from sira.streams import StreamEngine


def main() -> bool:
    """Feed the two streams, print each result as it becomes available; True when the live
    results equal the batch algebra's over the whole input."""
    engine = StreamEngine()
    orders = engine.create_stream("orders", {"ticker": sira.STRING})
    trades = engine.create_stream("trades", {"ticker": sira.STRING})
    seen = {"orders": [], "trades": []}
    for stream in (orders, trades):
        stream.subscribe(lambda row, bound, n=stream.name: row and seen[n].append(row))
    merged = engine.register("union(orders, trades)")
    counts = engine.register(
        "changes(summarizebyusing(window(union(orders, trades), ts, range(3)),"
        " (ticker, during), (n(plus(1))), (during)), at)")
    clock = {"step": ""}
    merged.subscribe(lambda row, bound: print(f"  {clock['step']:<34} union  -> "
                                              f"{row['ticker']} at {row['ts']}"))
    counts.subscribe(lambda row, bound: print(f"  {clock['step']:<34} count  -> {row['kind']} "
                                              f"{row['ticker']} n={row['n']} at {row['at']}"))
    po, pt = orders.attach("orders feed"), trades.attach("trades feed")
    script = [
        (po, "insert", "ORCL", 1001), (pt, "insert", "YHOO", 1002),
        (pt, "insert", "IBM", 1003), (po, "insert", "MSFT", 1004), (po, "bound", None, 1006),
        (pt, "insert", "GOOG", 1003), (pt, "bound", None, 1005), (pt, "insert", "IBM", 1005),
        (po, "insert", "ORCL", 1006), (pt, "bound", None, 1010), (po, "bound", None, 1010),
    ]
    print("feeding ORDERS and TRADES (times in minutes past 10:00, as 1001 = 10:01):")
    for producer, action, ticker, t in script:
        clock["step"] = (f"{producer.name}: insert {ticker} at {t}" if action == "insert"
                         else f"{producer.name}: bound {t}")
        if action == "insert":
            producer.insert({"ticker": ticker}, t)
        else:
            producer.bound(t)
        print(f"  {clock['step']}")
    po.detach()
    pt.detach()
    clock["step"] = "end of input"
    engine.finish()
    batch = {"orders": sira.Relation.from_rows(orders.heading, seen["orders"]),
             "trades": sira.Relation.from_rows(trades.heading, seen["trades"])}
    same = counts.relation() == sira.evaluate(counts.node, batch)
    print(f"live results equal the batch algebra on the whole input: {same}")
    return same


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
