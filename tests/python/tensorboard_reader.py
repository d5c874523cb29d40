"""Reads a TensorBoard log directory with TensorBoard's own EventAccumulator and
prints what it found as JSON, for tests/tensorboard/test_tensorboard_export.cpp:
{"scalars": {tag: [[step, value], ...]},
 "histograms": {tag: [[step, num, [bucket_limit...], [bucket...], min, max], ...]}}"""
import json
import math
import sys

from tensorboard.backend.event_processing import event_accumulator

acc = event_accumulator.EventAccumulator(
    sys.argv[1], size_guidance={event_accumulator.SCALARS: 0, event_accumulator.HISTOGRAMS: 0})
acc.Reload()
tags = acc.Tags()
out = {"scalars": {}, "histograms": {}}
def finite(v):  # JSON has no NaN: null
    return v if math.isfinite(v) else None


for tag in tags["scalars"]:
    out["scalars"][tag] = [[e.step, finite(e.value)] for e in acc.Scalars(tag)]
for tag in tags["histograms"]:
    out["histograms"][tag] = [
        [e.step, e.histogram_value.num, list(e.histogram_value.bucket_limit), list(e.histogram_value.bucket),
         e.histogram_value.min, e.histogram_value.max]
        for e in acc.Histograms(tag)]
print(json.dumps(out, allow_nan=False))
