pub(crate) fn build(_g: &crate::scene::Garment, _s: super::UvScale, _d: f64) -> crate::Result<super::ClothModel> { todo!() }
