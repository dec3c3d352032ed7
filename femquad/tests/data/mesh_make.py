"""Regenerates the Gmsh test meshes tests/data/mesh_*.msh (Gmsh 4.15.2: `pip install gmsh`).

Run from tests/data: `python mesh_make.py`. The malformed variants are derived from these
files inside the tests of femquad/src/mesh/gmsh/tests/.
"""
import gmsh, sys
def square(name, binary=False, clockwise=False, lc=0.5):
    gmsh.initialize(); gmsh.option.setNumber("General.Terminal", 0)
    gmsh.model.add("square")
    g = gmsh.model.geo
    p = [g.addPoint(x, y, 0, lc) for x, y in [(0,0),(1,0),(1,1),(0,1)]]
    l = [g.addLine(p[i], p[(i+1)%4]) for i in range(4)]
    loop = g.addCurveLoop([-c for c in reversed(l)] if clockwise else l)
    s = g.addPlaneSurface([loop])
    g.synchronize()
    gmsh.model.addPhysicalGroup(1, [l[0]], 1, "bottom")
    gmsh.model.addPhysicalGroup(1, [l[1], l[2], l[3]], 2, "rest")
    gmsh.model.addPhysicalGroup(0, [p[0]], 5, "origin")
    gmsh.model.addPhysicalGroup(2, [s], 3, "domain")
    gmsh.model.mesh.generate(2)
    gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
    gmsh.option.setNumber("Mesh.Binary", 1 if binary else 0)
    gmsh.write(name); gmsh.finalize()
def cube(name, binary=False, order=1, lc=1.0):
    gmsh.initialize(); gmsh.option.setNumber("General.Terminal", 0)
    gmsh.model.add("cube")
    v = gmsh.model.occ.addBox(0,0,0,1,1,1)
    gmsh.model.occ.synchronize()
    gmsh.model.mesh.setSize(gmsh.model.getEntities(0), lc)
    surfs = [t for d,t in gmsh.model.getEntities(2)]
    bottom = [t for t in surfs if abs(gmsh.model.occ.getCenterOfMass(2,t)[2]) < 1e-9]
    gmsh.model.addPhysicalGroup(2, bottom, 10, "bottom")
    gmsh.model.addPhysicalGroup(2, [t for t in surfs if t not in bottom], 11, "sides and top")
    gmsh.model.addPhysicalGroup(3, [v], 1, "solid")
    gmsh.model.mesh.generate(3)
    if order > 1: gmsh.model.mesh.setOrder(order)
    gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
    gmsh.option.setNumber("Mesh.Binary", 1 if binary else 0)
    gmsh.write(name); gmsh.finalize()
def disk(name, order=2, lc=0.8):
    gmsh.initialize(); gmsh.option.setNumber("General.Terminal", 0)
    gmsh.model.add("disk")
    s = gmsh.model.occ.addDisk(0,0,0,1,1)
    gmsh.model.occ.synchronize()
    gmsh.model.mesh.setSize(gmsh.model.getEntities(0), lc)
    gmsh.model.addPhysicalGroup(1, [t for d,t in gmsh.model.getEntities(1)], 7, "circle")
    gmsh.model.addPhysicalGroup(2, [s], 8, "disk")
    gmsh.model.mesh.generate(2)
    gmsh.model.mesh.setOrder(order)
    gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
    gmsh.write(name); gmsh.finalize()
square("mesh_square.msh")
square("mesh_square_binary.msh", binary=True)
square("mesh_square_clockwise.msh", clockwise=True)
cube("mesh_cube.msh")
cube("mesh_cube_binary.msh", binary=True)
cube("mesh_cube_p2_binary.msh", binary=True, order=2)
disk("mesh_disk_p2.msh")
