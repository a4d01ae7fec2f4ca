"""Synthetic stand-in for MovieLens ml-1m.zip (deterministic).
Usage: python make_ml1m.py OUT_ZIP N_RATINGS [N_USERS] [N_MOVIES]
Writes a zip holding ml-1m/{ratings,movies,users}.dat and README in the ml-1m '::'-separated layout
(ratings: UserID::MovieID::Rating::Timestamp, integer ratings 1..5). Defaults keep the real counts of
6040 users and 3706 movies: memory_efficient_embeddings needs > 2500 users (its quotient-remainder
embedding uses len(users)//50 buckets) and > 1700 movies (its movie blocks split at 400 and 1700)."""
import io, sys, zipfile
import numpy as np

out = sys.argv[1]
n = int(sys.argv[2])
n_users = int(sys.argv[3]) if len(sys.argv) > 3 else 6040
n_movies = int(sys.argv[4]) if len(sys.argv) > 4 else 3706
assert n >= n_users + n_movies, "need at least one rating per user and per movie"
rng = np.random.default_rng(0)
movie_ids = np.sort(rng.choice(np.arange(1, 3953), n_movies, replace=False))
k = 8
U = rng.normal(0, 0.5, (n_users, k)); M = rng.normal(0, 0.5, (n_movies, k))
ub = rng.normal(0, 0.4, n_users); mb = rng.normal(0, 0.5, n_movies)
up = rng.pareto(1.5, n_users) + 1; up /= up.sum()
mp = rng.pareto(1.0, n_movies) + 1; mp /= mp.sum()
pairs = set()
# every user and every movie appears at least once
for a, b in zip(range(n_users), rng.permutation(np.resize(np.arange(n_movies), n_users)).tolist()):
    pairs.add((a, b))
for b, a in zip(range(n_movies), rng.integers(0, n_users, n_movies).tolist()):
    pairs.add((a, b))
while len(pairs) < n:
    m = n - len(pairs) + 100
    for a, b in zip(rng.choice(n_users, m, p=up).tolist(), rng.choice(n_movies, m, p=mp).tolist()):
        pairs.add((a, b))
        if len(pairs) == n:
            break
rows = sorted(pairs)
r = np.array([3.6 + ub[a] + mb[b] + U[a] @ M[b] for a, b in rows]) + rng.normal(0, 0.7, n)
r = np.clip(np.round(r), 1, 5).astype(int)
ts = rng.integers(956703932, 1046454590, n)
ratings = "".join("%d::%d::%d::%d\n" % (a + 1, movie_ids[b], v, t) for (a, b), v, t in zip(rows, r, ts)).encode()
G = ["Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary", "Drama", "Fantasy",
     "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War", "Western"]
movies = "".join("%d::Movie %d (%d)::%s\n" % (mid, mid, int(rng.integers(1919, 2001)),
                 "|".join(G[j] for j in sorted(rng.choice(len(G), int(rng.integers(1, 4)), replace=False))))
                 for mid in movie_ids.tolist()).encode("latin-1")
users = "".join("%d::%s::%d::%d::%05d\n" % (u, "MF"[int(rng.integers(0, 2))], [1, 18, 25, 35, 45, 50, 56][int(rng.integers(0, 7))],
                int(rng.integers(0, 21)), int(rng.integers(0, 99999))) for u in range(1, n_users + 1)).encode()
with zipfile.ZipFile(out, "w") as z:
    for name, data in [("ml-1m/", b""), ("ml-1m/movies.dat", movies), ("ml-1m/ratings.dat", ratings),
                       ("ml-1m/README", b"Synthetic stand-in for MovieLens 1M (random data, same layout).\n"),
                       ("ml-1m/users.dat", users)]:
        zi = zipfile.ZipInfo(name, date_time=(2003, 3, 1, 0, 0, 0))
        zi.compress_type = zipfile.ZIP_DEFLATED if data else zipfile.ZIP_STORED
        zi.external_attr = (0o40755 << 16) | 0x10 if name.endswith("/") else 0o644 << 16
        z.writestr(zi, data)
print("wrote", out, "ratings:", n, "users:", n_users, "movies:", n_movies)
