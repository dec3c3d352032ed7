//! `$Entities`: the geometric entities and the physical groups they belong
//! to.

use super::GmshEntity;
use super::reader::{Reader, Records};
use crate::Result;

/// Names and record layouts of the entities of dimension 0 to 3.
const KINDS: [(&str, &str); 4] = [
    ("point", "pointTag X Y Z numPhysicalTags physicalTag…"),
    (
        "curve",
        "curveTag minX minY minZ maxX maxY maxZ numPhysicalTags physicalTag… \
         numBoundingPoints pointTag…",
    ),
    (
        "surface",
        "surfaceTag minX minY minZ maxX maxY maxZ numPhysicalTags physicalTag… \
         numBoundingCurves curveTag…",
    ),
    (
        "volume",
        "volumeTag minX minY minZ maxX maxY maxZ numPhysicalTags physicalTag… \
         numBoundingSurfaces surfaceTag…",
    ),
];

/// Reads `$Entities`: a header `numPoints numCurves numSurfaces
/// numVolumes`, then the entities of each dimension with their physical
/// tags (coordinates and bounding entities are skipped).
pub(super) fn read<R: Reader>(rec: &mut Records<R>) -> Result<Vec<GmshEntity>> {
    let (_, counts) = rec.record(
        || "the $Entities header 'numPoints numCurves numSurfaces numVolumes'".to_string(),
        |r| Ok([r.size()?, r.size()?, r.size()?, r.size()?]),
    )?;
    let total = counts.iter().fold(0u64, |a, &c| a.saturating_add(c));
    let mut entities = Vec::with_capacity(rec.capacity(total, 10));
    for (dim, (&count, (kind, layout))) in counts.iter().zip(KINDS).enumerate() {
        for i in 1..=count {
            let (_, entity) = rec.record(
                || format!("{kind} entity {i} of {count} '{layout}'"),
                |r| {
                    let tag = r.int()?;
                    for _ in 0..if dim == 0 { 3 } else { 6 } {
                        r.float()?;
                    }
                    let mut physical_tags = Vec::new();
                    for _ in 0..r.size()? {
                        physical_tags.push(r.int()?);
                    }
                    if dim > 0 {
                        for _ in 0..r.size()? {
                            r.int()?;
                        }
                    }
                    Ok(GmshEntity {
                        dim,
                        tag,
                        physical_tags,
                    })
                },
            )?;
            entities.push(entity);
        }
    }
    rec.finish(|| "the entities the $Entities header announces".to_string())?;
    Ok(entities)
}
