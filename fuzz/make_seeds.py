#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora (fuzz/corpus/<target>/): a few small valid
inputs per reader and a few near misses. Run from the repository root; the
output is committed, so this only needs running when a format changes."""
import os
import re
import sqlite3
import struct
import tempfile

root = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(root, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# MNIST: 2-byte big-endian length of the images file, the images file, the labels file.
def mnist(n, rows, cols, labels=None, images_magic=0x803, labels_magic=0x801):
    images = struct.pack(">IIII", images_magic, n, rows, cols) + bytes((i * 37) % 256 for i in range(n * rows * cols))
    lab = struct.pack(">II", labels_magic, n) + bytes(labels if labels is not None else [i % 10 for i in range(n)])
    return struct.pack(">H", len(images)) + images + lab


put("fuzz_mnist", "valid_3x4x4", mnist(3, 4, 4))
put("fuzz_mnist", "label_out_of_range", mnist(2, 2, 2, labels=[3, 12]))
put("fuzz_mnist", "count_mismatch", mnist(2, 3, 3)[:-1])
put("fuzz_mnist", "bad_magic", mnist(1, 2, 2, images_magic=0x801))

# CIFAR-10: records of 1 label byte + 3072 pixel bytes.
record = lambda label: bytes([label]) + bytes((i * 7 + label) % 256 for i in range(3072))
put("fuzz_cifar10", "two_records", record(1) + record(9))
put("fuzz_cifar10", "truncated", record(2)[:2000])
put("fuzz_cifar10", "bad_label", record(200))

put("fuzz_csv", "classification", "x1,x2,label\n1.5,2,0\n-3,4e2,1\n0.25,\"7\",2\n")
put("fuzz_csv", "regression_no_header", "1,2,0.5\n3,4,1.5\n\n5,6,-2.25\n")
put("fuzz_csv", "ragged", "a,b\n1,2\n3\n")
put("fuzz_csv", "not_finite", "a,b\n1,nan\n2,inf\n")

put("fuzz_text", "pangram", b"\x08" + b"the quick brown fox jumps over the lazy dog. " * 4)
put("fuzz_text", "short", b"\x20abc")
put("fuzz_text", "binary", b"\x03" + bytes(range(256)))

put("fuzz_toml_config", "gpt_bf16", '[train]\nmodel = "gpt"\nprecision = "bf16"\nsteps = 3\nlayers = 1\nwidth = 32\n')
put("fuzz_toml_config", "fp16_scaler", '[train]\nprecision = "fp16"\ninit-scale = 1024.0\ngrowth-interval = 10\n')
put("fuzz_toml_config", "contradiction", '[train]\nscaler = true\nno-scaler = true\n')
put("fuzz_toml_config", "bad_value", '[train]\nsteps = "many"\noptimizer = "lion"\n')

rules = open(os.path.join(root, "..", "resources", "tensor_core_kernels.txt")).read()
put("fuzz_tensor_core_rules", "shipped_table", rules)
put("fuzz_tensor_core_rules", "bad_regex", "(unclosed yes family\n")
put("fuzz_tensor_core_rules", "bad_verdict", "gemm maybe family\n")

# A session: the schema the writer creates, a few rows of each table.
schema = re.search(r'R"sql\((.*?)\)sql"', open(os.path.join(root, "..", "profiler", "store", "session_schema.cpp")).read(), re.S).group(1)
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "s.ampscope")
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size=512")
    db.executescript(schema)
    db.executemany("INSERT INTO meta VALUES (?, ?)", [("ampscope_version", "0.1.0"), ("precision", "bf16"),
                                                      ("device", "cpu"), ("final_state", "finished")])
    db.executemany("INSERT INTO steps VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   [(s, 2.0 / s, 1e-3, 65536.0, 0, 0, s, 1.0, 5.0, 1000.0, 1 << 20, 2 << 20, 3 << 20, s * 1000,
                     None if s == 1 else 1.5) for s in (1, 2)])
    db.execute("INSERT INTO op_signatures VALUES (1, 'aten::linear', 'forward', 'demoted', 'fc1', "
               "'float,float,float', '[[8,16],[32,16],[32]]', 'c10::BFloat16')")
    db.execute("INSERT INTO op_calls VALUES (1, 0, 1, 1, 7, 0, 0, 1, 100, 900, 0, 0)")
    db.execute("INSERT INTO op_stats VALUES (1, 'aten::linear', 'fc1', 'forward', 'demoted', 'float', '[[8,16]]', "
               "'c10::BFloat16', 2, 1600, 0, 0, 0, 0, 1, 64, 50, 0, 1, '', 1, 0)")
    db.execute("INSERT INTO gradients(step, parameter, loss_scale, numel, log2_histogram, zero_fraction, "
               "nonfinite_fraction, fp16_underflow_fraction, fp16_subnormal_fraction, fp16_overflow_fraction, "
               "min_abs_nonzero, max_abs, norm) VALUES (2, 'fc1.weight', 65536.0, 512, x'0102', 0.0, 0.0, 0.01, 0.02, 0.0, "
               "1e-9, 0.5, 1.2)")
    db.commit()
    db.execute("VACUUM")
    db.close()
    session = open(path, "rb").read()
put("fuzz_session_reader", "small_session", session)
put("fuzz_session_reader", "truncated_session", session[: len(session) // 2])
put("fuzz_session_reader", "not_sqlite", "this is not a database\n")
