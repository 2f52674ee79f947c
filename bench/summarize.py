"""Reads the JSON lines bench/compare-redis.sh saved and prints the side-by-side table and the
targets of issue 6, each as a ratio measured in the same run (median of runs, min..max)."""
import json, os, statistics, sys

out = sys.argv[1]

def runs(prefix):
    found = []
    for name in sorted(os.listdir(out)):
        if name.startswith(prefix + "-") and name[len(prefix) + 1:-5].isdigit():
            try:
                with open(os.path.join(out, name)) as f:
                    found.append(json.load(f))
            except (ValueError, OSError):
                pass
    return found

def figure(prefix, key):
    values = [r[key] for r in runs(prefix) if r.get(key) is not None]
    return values

def med(values):
    return statistics.median(values) if values else float("nan")

def spread(values, fmt):
    if not values:
        return "no data"
    return (fmt % med(values)) + ("  (" + fmt % min(values) + ".." + fmt % max(values) + ")" if len(values) > 1 else "")

def cpu_per_ack(prefix):
    """Server CPU microseconds per acknowledged mutation, per run (where the CPU was read)."""
    return [r["serverCPUSeconds"] / r["acknowledged"] * 1e6 for r in runs(prefix)
            if r.get("serverCPUSeconds") is not None and r.get("acknowledged")]

def rss(prefix):
    """Peak RSS where known (a spawned bq), else the RSS at the end (Redis, given its PID)."""
    return [r.get("serverPeakRSSMiB") or r.get("serverRSSMiB") for r in runs(prefix)
            if (r.get("serverPeakRSSMiB") or r.get("serverRSSMiB")) is not None]

rows = []
for depth in (1, 16):
    for target in ("bq", "redis", "echo"):
        p = f"{target}-50x{depth}"
        rows.append((f"50x{depth} {target}", spread(figure(p, "acknowledgedPerSecond"), "%.0f"),
                     spread(figure(p, "ackP50Ms"), "%.2f"), spread(figure(p, "ackP99Ms"), "%.2f"),
                     spread(figure(p, "serverCPUSeconds"), "%.1f"), spread(cpu_per_ack(p), "%.1f"),
                     spread(rss(p), "%.0f")))
for target in ("bq", "redis"):
    p = f"{target}-fanout"
    rows.append((f"1000 subs @100/s {target}", spread(figure(p, "acknowledgedPerSecond"), "%.0f"),
                 "delivery p50 " + spread(figure(p, "deliveryP50Ms"), "%.2f"),
                 "delivery p99 " + spread(figure(p, "deliveryP99Ms"), "%.2f"),
                 spread(figure(p, "serverCPUSeconds"), "%.1f"), "", spread(rss(p), "%.0f")))
header = ("shape / target", "acked/s med (min..max)", "ack p50 ms", "ack p99 ms", "server CPU s",
          "CPU us/ack", "RSS MiB")
print("%-24s %-26s %-28s %-28s %-20s %-20s %s" % header)
for r in rows:
    print("%-24s %-26s %-28s %-28s %-20s %-20s %s" % r)

def paired_ratio(a, b, key, invert=False):
    """Ratio per run index (same run, same machine moment), then the median and range."""
    ra, rb = runs(a), runs(b)
    ratios = []
    for x, y in zip(ra, rb):
        if x.get(key) and y.get(key):
            ratios.append(y[key] / x[key] if invert else x[key] / y[key])
    return ratios

print()
print("%-66s %-22s %s" % ("target (issue 6)", "measured ratio", "verdict"))
def verdict(name, ratios, goal, higher_is_better=True):
    if not ratios:
        print("%-66s %-22s %s" % (name, "no data", "NOT measured"))
        return
    m = med(ratios)
    ok = m >= goal if higher_is_better else m <= goal
    print("%-66s %-22s %s" % (name, spread(ratios, "%.2f"), "met" if ok else "NOT met"))

verdict("50x1: bq acked/s >= 2x Redis", paired_ratio("bq-50x1", "redis-50x1", "acknowledgedPerSecond"), 2.0)
verdict("50x1: bq acked/s >= 0.5x bare echo", paired_ratio("bq-50x1", "echo-50x1", "acknowledgedPerSecond"), 0.5)
verdict("50x1: bq ack p99 <= Redis ack p99 (bq/redis)", paired_ratio("bq-50x1", "redis-50x1", "ackP99Ms"), 1.0, False)
verdict("50x16: bq acked/s >= 2x Redis", paired_ratio("bq-50x16", "redis-50x16", "acknowledgedPerSecond"), 2.0)
verdict("1000 subs @100/s: bq delivery p99 <= 0.5x Redis pub/sub (bq/redis)",
        paired_ratio("bq-fanout", "redis-fanout", "deliveryP99Ms"), 0.5, False)
rss = figure("bq-fanout", "serverPeakRSSMiB")
print("%-66s %-22s %s" % ("1000 subscribers: server peak RSS < 100 MiB", spread(rss, "%.1f MiB"),
                         ("met" if rss and max(rss) < 100 else "NOT met") if rss else "NOT measured"))
try:
    with open(os.path.join(out, "startup.json")) as f:
        s = json.load(f)
    t = s["startupSeconds"]
    print("%-66s %-22s %s" % ("start-up with %d events listening within 2 s" % s["events"], spread(t, "%.2f s"),
                             "met" if max(t) < 2 and s["events"] >= 1000000 else "NOT met"))
except (OSError, ValueError, KeyError):
    print("%-66s %-22s %s" % ("start-up with 1,000,000 events listening within 2 s", "skipped", "NOT measured"))
