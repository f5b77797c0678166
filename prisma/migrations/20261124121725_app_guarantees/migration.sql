-- AlterTable
ALTER TABLE "App" ADD COLUMN     "guarantees" JSONB NOT NULL DEFAULT '{}';
