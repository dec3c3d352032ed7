#!/usr/bin/env python3
"""Writes the example meshes of this folder in Gmsh's MSH 4.1 ASCII format.

  lshape.msh    the L-shaped domain (0,1)^2 minus [1/2,1]x[1/2,1]: triangles of
                size about 1/16 with perturbed interior nodes and alternating
                diagonals; physical groups: curves "outer" (the six sides
                except the two re-entrant ones) and "reentrant" (the two sides
                meeting at the re-entrant corner (1/2, 1/2)), surface "domain".
  lshape3d.msh  the L-shaped prism lshape x (0, 1/2): tetrahedra (six per
                cube, Kuhn subdivision) of size about 1/8; physical groups:
                surface "boundary" (all boundary triangles), volume "domain".

The files are what Gmsh would write for such models (entities with their
bounding boxes and physical tags, nodes and elements in entity blocks), made
by this script so that they are reproducible without Gmsh:

  python3 examples/meshes/make_meshes.py
"""

import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def jitter(i, j, amplitude):
    """A deterministic pseudo-random displacement of grid node (i, j)."""
    a = math.sin(12.9898 * i + 78.233 * j) * 43758.5453
    b = math.sin(39.3468 * i + 11.135 * j) * 24634.6345
    return amplitude * (2 * (a - math.floor(a)) - 1), amplitude * (2 * (b - math.floor(b)) - 1)


def fmt(v):
    return repr(float(v))


def lshape(n=16):
    """L-shape: squares (i, j) of side 1/n, leaving out the upper-right quarter."""
    h = 1.0 / n
    half = n // 2

    def inside_square(i, j):
        return not (i >= half and j >= half)

    squares = [(i, j) for j in range(n) for i in range(n) if inside_square(i, j)]
    used = set()
    for i, j in squares:
        used.update([(i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1)])

    # Corners (geometric points), counter-clockwise from the origin.
    corners = [(0, 0), (n, 0), (n, half), (half, half), (half, n), (0, n)]
    # Sides: (from corner, to corner); sides 3 and 4 are re-entrant.
    sides = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)]
    reentrant = {3, 4}  # 1-based curve tags of sides 2 and 3 (0-based) -> tags 3, 4

    def on_side(p, s):
        (a, b) = (corners[sides[s][0]], corners[sides[s][1]])
        (x, y) = p
        if a[0] == b[0] == x:
            return min(a[1], b[1]) < y < max(a[1], b[1])
        if a[1] == b[1] == y:
            return min(a[0], b[0]) < x < max(a[0], b[0])
        return False

    # Entity of each grid node: point k, curve s, or the surface.
    entity = {}
    for p in used:
        if p in corners:
            entity[p] = (0, corners.index(p) + 1)
            continue
        for s in range(6):
            if on_side(p, s):
                entity[p] = (1, s + 1)
                break
        else:
            entity[p] = (2, 1)

    def coords(p):
        i, j = p
        x, y = i * h, j * h
        if entity[p][0] == 2:
            dx, dy = jitter(i, j, 0.2 * h)
            x, y = x + dx, y + dy
        return (x, y, 0.0)

    # Node tags: points first, then curves (in order along the side), then the surface.
    blocks = []
    tag = {}
    next_tag = 1
    for k, c in enumerate(corners):
        tag[c] = next_tag
        next_tag += 1
        blocks.append(((0, k + 1), [c]))
    for s in range(6):
        a, b = corners[sides[s][0]], corners[sides[s][1]]
        steps = max(abs(b[0] - a[0]), abs(b[1] - a[1]))
        pts = []
        for t in range(1, steps):
            p = (a[0] + (b[0] - a[0]) * t // steps, a[1] + (b[1] - a[1]) * t // steps)
            pts.append(p)
        for p in pts:
            tag[p] = next_tag
            next_tag += 1
        blocks.append(((1, s + 1), pts))
    interior = sorted((p for p in used if entity[p] == (2, 1)), key=lambda p: (p[1], p[0]))
    for p in interior:
        tag[p] = next_tag
        next_tag += 1
    blocks.append(((2, 1), interior))

    # Elements: boundary lines per curve, then triangles.
    element_blocks = []
    next_el = 1
    for s in range(6):
        a, b = corners[sides[s][0]], corners[sides[s][1]]
        steps = max(abs(b[0] - a[0]), abs(b[1] - a[1]))
        pts = [(a[0] + (b[0] - a[0]) * t // steps, a[1] + (b[1] - a[1]) * t // steps) for t in range(steps + 1)]
        lines = []
        for t in range(steps):
            lines.append((next_el, [tag[pts[t]], tag[pts[t + 1]]]))
            next_el += 1
        element_blocks.append(((1, s + 1), 1, lines))
    triangles = []
    for i, j in squares:
        p00, p10, p01, p11 = (i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1)
        if (i + j) % 2 == 0:
            tris = [(p00, p10, p11), (p00, p11, p01)]
        else:
            tris = [(p00, p10, p01), (p10, p11, p01)]
        for t in tris:
            triangles.append((next_el, [tag[q] for q in t]))
            next_el += 1
    element_blocks.append(((2, 1), 2, triangles))

    out = []
    out += ["$MeshFormat", "4.1 0 8", "$EndMeshFormat"]
    out += ["$PhysicalNames", "3", '1 1 "outer"', '1 2 "reentrant"', '2 3 "domain"', "$EndPhysicalNames"]
    out += ["$Entities", "6 6 1 0"]
    for k, (i, j) in enumerate(corners):
        out.append(f"{k + 1} {fmt(i * h)} {fmt(j * h)} 0 0")
    for s in range(6):
        a, b = corners[sides[s][0]], corners[sides[s][1]]
        phys = 2 if (s + 1) in reentrant else 1
        lo = (min(a[0], b[0]) * h, min(a[1], b[1]) * h)
        hi = (max(a[0], b[0]) * h, max(a[1], b[1]) * h)
        out.append(
            f"{s + 1} {fmt(lo[0])} {fmt(lo[1])} 0 {fmt(hi[0])} {fmt(hi[1])} 0 1 {phys} "
            f"2 {sides[s][0] + 1} -{sides[s][1] + 1}"
        )
    out.append("1 0 0 0 1 1 0 1 3 6 1 2 3 4 5 6")
    out.append("$EndEntities")
    n_nodes = next_tag - 1
    out += ["$Nodes", f"{len(blocks)} {n_nodes} 1 {n_nodes}"]
    for (dim, etag), pts in blocks:
        out.append(f"{dim} {etag} 0 {len(pts)}")
        out += [str(tag[p]) for p in pts]
        out += [" ".join(fmt(v) for v in coords(p)) for p in pts]
    out.append("$EndNodes")
    n_el = next_el - 1
    out += ["$Elements", f"{len(element_blocks)} {n_el} 1 {n_el}"]
    for (dim, etag), etype, els in element_blocks:
        out.append(f"{dim} {etag} {etype} {len(els)}")
        out += [" ".join(str(v) for v in [t] + nodes) for t, nodes in els]
    out.append("$EndElements")
    return "\n".join(out) + "\n"


# The six tetrahedra of the Kuhn subdivision of the unit cube: paths from
# (0,0,0) to (1,1,1) along the axes in the order of a permutation.
PERMS = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]


def orientation(t):
    """Sign of det [t1 - t0, t2 - t0, t3 - t0]."""
    a, b, c = ([t[m][d] - t[0][d] for d in range(3)] for m in (1, 2, 3))
    return (
        a[0] * (b[1] * c[2] - b[2] * c[1])
        - a[1] * (b[0] * c[2] - b[2] * c[0])
        + a[2] * (b[0] * c[1] - b[1] * c[0])
    )


def lshape3d(n=8, layers=4):
    h = 1.0 / n
    half = n // 2
    cubes = [
        (i, j, k)
        for k in range(layers)
        for j in range(n)
        for i in range(n)
        if not (i >= half and j >= half)
    ]
    tets = []
    for c in cubes:
        for perm in PERMS:
            p = list(c)
            verts = [tuple(p)]
            for axis in perm:
                p[axis] += 1
                verts.append(tuple(p))
            if orientation(verts) < 0:
                # Gmsh writes positively oriented tetrahedra
                verts[1], verts[2] = verts[2], verts[1]
            tets.append(verts)
    # boundary faces: faces of exactly one tetrahedron
    count = {}
    for t in tets:
        for skip in range(4):
            f = tuple(sorted(v for m, v in enumerate(t) if m != skip))
            count[f] = count.get(f, 0) + 1
    faces = []
    for t in tets:
        for skip in range(4):
            f = [v for m, v in enumerate(t) if m != skip]
            if count[tuple(sorted(f))] == 1:
                faces.append(f)
    on_boundary = {v for f in faces for v in f}
    nodes = sorted({v for t in tets for v in t}, key=lambda p: (p[2], p[1], p[0]))
    boundary_nodes = [p for p in nodes if p in on_boundary]
    interior_nodes = [p for p in nodes if p not in on_boundary]
    tag = {}
    for p in boundary_nodes + interior_nodes:
        tag[p] = len(tag) + 1

    def coords(p):
        return (p[0] * h, p[1] * h, p[2] * h)

    out = ["$MeshFormat", "4.1 0 8", "$EndMeshFormat"]
    out += ["$PhysicalNames", "2", '2 1 "boundary"', '3 2 "domain"', "$EndPhysicalNames"]
    zmax = layers * h
    out += ["$Entities", "0 0 1 1", f"1 0 0 0 1 1 {fmt(zmax)} 1 1 0", f"1 0 0 0 1 1 {fmt(zmax)} 1 2 1 1"]
    out.append("$EndEntities")
    nn = len(tag)
    out += ["$Nodes", f"2 {nn} 1 {nn}"]
    for (dim, etag), pts in (((2, 1), boundary_nodes), ((3, 1), interior_nodes)):
        out.append(f"{dim} {etag} 0 {len(pts)}")
        out += [str(tag[p]) for p in pts]
        out += [" ".join(fmt(v) for v in coords(p)) for p in pts]
    out.append("$EndNodes")
    ne = len(faces) + len(tets)
    out += ["$Elements", f"2 {ne} 1 {ne}"]
    out.append(f"2 1 2 {len(faces)}")
    e = 1
    for f in faces:
        out.append(" ".join(str(v) for v in [e] + [tag[p] for p in f]))
        e += 1
    out.append(f"3 1 4 {len(tets)}")
    for t in tets:
        out.append(" ".join(str(v) for v in [e] + [tag[p] for p in t]))
        e += 1
    out.append("$EndElements")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    for name, text in (("lshape.msh", lshape()), ("lshape3d.msh", lshape3d())):
        with open(os.path.join(HERE, name), "w") as f:
            f.write(text)
        print(f"wrote {name}")
