"""Synthetic stand-in for MovieLens ml-latest-small.zip (deterministic).
Usage: python make_movielens.py OUT_ZIP N_RATINGS [N_USERS] [N_MOVIES]
Writes a zip holding ml-latest-small/{ratings,movies,links,tags}.csv and README.txt in the
MovieLens CSV layout (ratings: userId,movieId,rating,timestamp; ratings 0.5..5.0 in 0.5 steps)."""
import csv, io, sys, zipfile
import numpy as np

out = sys.argv[1]
n = int(sys.argv[2])
n_users = int(sys.argv[3]) if len(sys.argv) > 3 else 610
n_movies = int(sys.argv[4]) if len(sys.argv) > 4 else 9742
rng = np.random.default_rng(0)
GENRES = ["Action", "Adventure", "Animation", "Children", "Comedy", "Crime", "Documentary", "Drama",
          "Fantasy", "Film-Noir", "Horror", "IMAX", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller",
          "War", "Western"]
WORDS = ["Night", "Story", "Return", "Love", "City", "Dark", "Last", "Road", "King", "Dream", "Blue",
         "House", "Man", "Secret", "Summer", "War", "River", "Star", "Ghost", "Game"]
# movieIds are sparse, like the real file (1..193609)
movie_ids = np.sort(rng.choice(np.arange(1, 200000), n_movies, replace=False))
user_ids = np.arange(1, n_users + 1)
k = 8
U = rng.normal(0, 0.5, (n_users, k)); M = rng.normal(0, 0.5, (n_movies, k))
ub = rng.normal(0, 0.4, n_users); mb = rng.normal(0, 0.5, n_movies)
# popularity-skewed sampling of (user, movie) pairs, no duplicates
up = rng.pareto(1.2, n_users) + 1; up /= up.sum()
mp = rng.pareto(1.0, n_movies) + 1; mp /= mp.sum()
pairs = set()
rows = []
while len(rows) < n:
    m = n - len(rows)
    uu = rng.choice(n_users, m + m // 4 + 10, p=up)
    mm = rng.choice(n_movies, m + m // 4 + 10, p=mp)
    for a, b in zip(uu.tolist(), mm.tolist()):
        if (a, b) in pairs:
            continue
        pairs.add((a, b))
        rows.append((a, b))
        if len(rows) == n:
            break
rows.sort()
r_ui = np.array([3.5 + ub[a] + mb[b] + U[a] @ M[b] for a, b in rows]) + rng.normal(0, 0.6, n)
r_ui = np.clip(np.round(r_ui * 2) / 2, 0.5, 5.0)
ts = rng.integers(828124615, 1537799250, n)

def to_csv(header, data):
    s = io.StringIO(); w = csv.writer(s, lineterminator="\n"); w.writerow(header); w.writerows(data)
    return s.getvalue().encode()

ratings = to_csv(["userId", "movieId", "rating", "timestamp"],
                 [(int(user_ids[a]), int(movie_ids[b]), float(r), int(t)) for (a, b), r, t in zip(rows, r_ui, ts)])
movies = []
for i, mid in enumerate(movie_ids.tolist()):
    nw = int(rng.integers(1, 4))
    title = " ".join(WORDS[j] for j in rng.choice(len(WORDS), nw, replace=False))
    if rng.random() < 0.1:
        title = title + ", The"
    title += " (%d)" % int(rng.integers(1920, 2018))
    g = "|".join(GENRES[j] for j in sorted(rng.choice(len(GENRES), int(rng.integers(1, 4)), replace=False)))
    movies.append((mid, title, g))
movies_b = to_csv(["movieId", "title", "genres"], movies)
links = to_csv(["movieId", "imdbId", "tmdbId"], [(mid, "%07d" % (100000 + mid), 1000 + mid) for mid in movie_ids.tolist()])
tags = to_csv(["userId", "movieId", "tag", "timestamp"],
              [(int(user_ids[a]), int(movie_ids[b]), "synthetic", int(t)) for (a, b), t in zip(rows[:: max(1, n // 3000)], ts)])
readme = b"Synthetic stand-in for MovieLens ml-latest-small (random data, same CSV layout).\n"
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for name, data in [("ml-latest-small/", b""), ("ml-latest-small/links.csv", links),
                       ("ml-latest-small/tags.csv", tags), ("ml-latest-small/ratings.csv", ratings),
                       ("ml-latest-small/README.txt", readme), ("ml-latest-small/movies.csv", movies_b)]:
        zi = zipfile.ZipInfo(name, date_time=(2018, 9, 26, 0, 0, 0))
        zi.compress_type = zipfile.ZIP_DEFLATED if data else zipfile.ZIP_STORED
        zi.external_attr = (0o40755 << 16) | 0x10 if name.endswith("/") else 0o644 << 16
        z.writestr(zi, data)
print("wrote", out, "ratings:", n, "users:", n_users, "movies:", n_movies)
