#!/usr/bin/python3
"""Baselines from scikit-learn (Debian python3-sklearn 1.2.1) on the tables
that `lucid model features` exports, so every model sees the same features
and the same split as lucid's own.

usage: sklearn_bench.py TASK TABLE.csv
  TASK regression: rows with split=train train, split=test are scored (MAE, R2)
  TASK sharing: scikit-learn's train_test_split(test_size=0.3, random_state=42)
       (lucid reproduces it exactly) and leave-one-out for the tree.
Prints one CSV line per model: task,model,metric,value,train_seconds
"""
import csv
import sys
import time
import warnings

import numpy as np
from sklearn.ensemble import (HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.exceptions import ConvergenceWarning
from sklearn.impute import SimpleImputer
from sklearn.model_selection import LeaveOneOut, train_test_split
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

warnings.filterwarnings("ignore", category=ConvergenceWarning)


def load(path):
    """Features as floats (string columns as codes of the training rows'
    sorted categories, unseen -> -1), the target, and the split column."""
    rows = list(csv.reader(open(path)))
    head, body = rows[0], rows[1:]
    has_split = head[-1] == "split"
    nfeat = len(head) - (3 if has_split else 2)
    split = np.array([r[-1] for r in body]) if has_split else None
    target = np.array([float(r[nfeat + 1]) for r in body])
    cols = []
    for j in range(1, nfeat + 1):
        raw = [r[j] for r in body]
        try:
            cols.append([float(v) if v != "" else np.nan for v in raw])
        except ValueError:
            train_vals = raw if split is None else [v for v, s in zip(raw, split) if s == "train"]
            codes = {v: i for i, v in enumerate(sorted(set(train_vals)))}
            cols.append([float(codes.get(v, -1)) for v in raw])
    return head[1:nfeat + 1], np.array(cols).T, target, split


def imputed(model):
    return make_pipeline(SimpleImputer(strategy="median"), model)


def regressors():
    return {
        "HistGradientBoosting": HistGradientBoostingRegressor(random_state=0),
        "RandomForest": imputed(RandomForestRegressor(n_estimators=100, n_jobs=2, random_state=0)),
        "MLP": imputed(make_pipeline(StandardScaler(),
                                     MLPRegressor(hidden_layer_sizes=(100,), max_iter=300,
                                                  early_stopping=True, random_state=0))),
        "DecisionTree": imputed(DecisionTreeRegressor(min_samples_leaf=5, random_state=0)),
    }


def classifiers():
    return {
        "DecisionTree(ccp_alpha=1e-4)": DecisionTreeClassifier(ccp_alpha=1e-4, random_state=0),
        "HistGradientBoosting": HistGradientBoostingClassifier(random_state=0),
        "RandomForest": RandomForestClassifier(n_estimators=100, random_state=0),
        "MLP": make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(100,),
                                                             max_iter=2000, random_state=0)),
    }


def main():
    task, path = sys.argv[1], sys.argv[2]
    names, x, y, split = load(path)
    if task == "regression":
        tr, te = split == "train", split == "test"
        for name, model in regressors().items():
            t0 = time.perf_counter()
            model.fit(x[tr], y[tr])
            secs = time.perf_counter() - t0
            p = model.predict(x[te])
            mae = np.abs(p - y[te]).mean()
            r2 = 1 - ((p - y[te]) ** 2).sum() / ((y[te] - y[te].mean()) ** 2).sum()
            print(f"{path},{name},MAE,{mae:.4f},{secs:.2f}")
            print(f"{path},{name},R2,{r2:.4f},{secs:.2f}")
    else:
        idx = np.arange(len(y))
        tr, te = train_test_split(idx, test_size=0.3, random_state=42)
        for name, model in classifiers().items():
            t0 = time.perf_counter()
            model.fit(x[tr], y[tr])
            secs = time.perf_counter() - t0
            acc = (model.predict(x[te]) == y[te]).mean()
            print(f"{path},{name},accuracy,{acc:.4f},{secs:.3f}")
        right = 0
        for a, b in LeaveOneOut().split(x):
            m = DecisionTreeClassifier(ccp_alpha=1e-4, random_state=0).fit(x[a], y[a])
            right += int(m.predict(x[b])[0] == y[b][0])
        print(f"{path},DecisionTree(ccp_alpha=1e-4),leave-one-out,{right / len(y):.4f},")


if __name__ == "__main__":
    main()
