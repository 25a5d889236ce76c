"""MED 2.0 (Mecanismo Especial de Devolução): disputes of received Pix, notified by the PSP (`models`, `services`)."""
