//! stub
/// stub
pub struct GmshMesh;
/// stub
pub struct GmshElement;
/// stub
pub struct GmshEntity;
/// stub
pub struct PhysicalGroup;
/// stub
pub fn read_gmsh() {}
